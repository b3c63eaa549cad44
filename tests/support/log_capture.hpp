// The host's own log set-up (as xconnd installs it), every level, into a file a test reads back: for proving that
// a planted secret reaches no log line. Logging goes back to stderr when the capture ends.
#pragma once

#include "core/base/log.hpp"
#include "support/test_support.hpp"

#include <spdlog/spdlog.h>

#include <string>

namespace xconn::test {

class log_capture {
 public:
  log_capture() { log::init(spdlog::level::trace, file_.string()); }
  ~log_capture() { log::init(); }
  log_capture(const log_capture&) = delete;
  log_capture& operator=(const log_capture&) = delete;

  // Everything logged so far.
  std::string text() const {
    spdlog::default_logger()->flush();
    return read_file(file_);
  }

 private:
  temp_dir dir_;
  std::filesystem::path file_ = dir_.path() / "xconn.log";
};

}  // namespace xconn::test

// The HTTP side of the load: echo's /inject (as if its far side wrote), uploads, downloads and /health.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace xconn::chaos {

struct target {
  unsigned short port = 0;
  std::string key;
};

struct inject_result {
  int status = 0;
  std::string message_id;
  bool duplicate = false;
};
// with_file: a small text attachment stored through the host with the message.
inject_result inject(const target& t, const std::string& channel, const std::string& msg_id, bool with_file);

struct upload_result {
  int status = 0;
  std::string file_ref, sha256, expires_at, byte_size;
};
upload_result upload(const target& t, const std::string& channel, const std::string& bytes);

struct download_result {
  int status = 0;
  std::string sha256;
};
download_result download(const target& t, const std::string& file_ref);

struct inbound_counters {
  long long pending = -1, expired = 0, evicted = 0, rejected = 0;
};
std::optional<inbound_counters> inbound_health(const target& t);

}  // namespace xconn::chaos

// A store of a benchmark's own, in a fresh folder under /tmp (a real disk: commits really fsync), removed after.
#pragma once

#include "core/store/store.hpp"

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>
#include <unistd.h>

namespace xconn::bench {

struct bench_store {
  std::filesystem::path dir;
  std::unique_ptr<xconn::store> store;

  explicit bench_store(std::vector<std::string> databases) {
    char tmpl[] = "/tmp/xconn-bench-XXXXXX";
    if (!::mkdtemp(tmpl)) std::abort();
    dir = tmpl;
    auto s = xconn::store::open({dir.string(), 1ull << 30, std::move(databases)});
    if (!s) std::abort();
    store = std::move(*s);
  }
  ~bench_store() {
    store.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

}  // namespace xconn::bench

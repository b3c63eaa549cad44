// The whole host: store, keys, plugins, listener and I/O threads, started and stopped in order.
#pragma once

#include "core/config.hpp"

#include <boost/system/result.hpp>

#include <memory>
#include <string>

namespace xconn {

class server {
 public:
  explicit server(config cfg);
  ~server();  // stops if still running
  server(const server&) = delete;
  server& operator=(const server&) = delete;

  // Opens the store, loads the keys and plugins, binds and starts serving. Returns an error line, or ""
  // once the listener accepts.
  std::string start();

  // Stops accepting, closes data-plane sockets with 1001, stops plugins, flushes the store, joins the
  // threads. Idempotent; safe from any thread except an I/O thread.
  void stop();

  unsigned short port() const;
  const std::string& base_url() const;  // public base, e.g. http://127.0.0.1:8840
  const std::string& key_file() const;  // where a generated key lives ("" when keys are configured)
  const config& settings() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace xconn

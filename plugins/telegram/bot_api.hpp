// The Telegram Bot API over the adapter layer's HTTP client (<xconn/adapter/http_client.hpp>): one call, one
// multipart upload, one file fetched by its file_id, each an Asio coroutine with a deadline, read into Telegram's
// answer shape. Telegram's rate limit is kept here: a 429 holds every later call of that token until its
// retry_after has passed. Every answer is counted for /metrics. The bot token is part of every URL: no error text
// here ever contains a URL, a request or a response body.
#pragma once

#include "api_endpoint.hpp"
#include "proxy_url.hpp"

#include <xconn/adapter/http_client.hpp>
#include <xconn/adapter/rate_limiter.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace telegram {

// One Bot API answer. transport_error set: no HTTP answer came (refused, TLS, timeout); else the status and, for a
// JSON body, Telegram's {"ok", "result", "error_code", "description", "parameters": {"retry_after"}}.
struct api_reply {
  std::string transport_error;  // "timeout", "connect_failed", "tls_failed", ... never with a URL
  int http_status = 0;
  bool ok = false;
  boost::json::value result;
  int error_code = 0;
  std::string description;
  int retry_after_s = 0;

  bool reached() const { return transport_error.empty(); }
};

struct file_part {
  std::string field;     // "photo", "document", "video"
  std::string filename;
  std::string mime_type;
  std::string bytes;
};

// What /metrics shows of one Bot API answer (xconn_plugin_events_total): polls, updates, sends, edits, rate-limit
// waits, errors by HTTP status. Each counter with its increment.
inline std::vector<std::pair<std::string, std::uint64_t>> counters_of(const std::string& method, const api_reply& r) {
  if (!r.reached()) return {{"errors_unreachable", 1}};
  if (!r.ok) {
    std::vector<std::pair<std::string, std::uint64_t>> out{{"errors_" + std::to_string(r.http_status), 1}};
    if (r.http_status == 429) out.emplace_back("rate_limit_waits", 1);
    return out;
  }
  if (method == "getUpdates")
    return {{"polls", 1}, {"updates", r.result.is_array() ? r.result.as_array().size() : 0}};
  if (method == "editMessageText") return {{"edits", 1}};
  if (method.starts_with("send") && method != "sendChatAction") return {{"sends", 1}};
  return {};
}

class bot_api {
 public:
  using counter = std::function<void(const std::string& name, std::uint64_t n)>;
  using time_point = std::chrono::steady_clock::time_point;

  // ca_file: extra PEM certificates to trust ("" for none); the error, if it cannot be read, in *error. proxy: an
  // http:// (CONNECT) or socks5:// proxy every request tunnels through (TLS stays end to end). count: where each
  // answer's counters_of go.
  bot_api(boost::asio::io_context& io, api_endpoint endpoint, const std::string& ca_file, std::string* error,
          std::optional<proxy_url> proxy, counter count);

  // Closes the kept connections: before the io_context they belong to goes (the plugin's halt).
  void close_idle() { client_.close_idle(); }

  // A call made while the token is held waits first; one with a deadline is asked again after a 429 while the wait
  // ends before the deadline.
  boost::asio::awaitable<api_reply> call(const std::string& token, const std::string& method,
                                         const boost::json::object& params, std::chrono::seconds timeout,
                                         time_point deadline = {});
  boost::asio::awaitable<api_reply> upload(const std::string& token, const std::string& method,
                                           const boost::json::object& fields, const file_part& file,
                                           std::chrono::seconds timeout);
  // getFile, then GET {base}/file/bot<token>/<file_path>: the file's bytes, at most max_bytes; nullopt when it
  // cannot be had.
  boost::asio::awaitable<std::optional<std::string>> fetch_file(const std::string& token, const std::string& file_id,
                                                                std::size_t max_bytes, std::chrono::seconds timeout);

 private:
  static xconn::adapter::http_client::options options_for(const std::string& ca_file, std::optional<proxy_url> proxy);
  boost::asio::awaitable<api_reply> counted(const std::string& method, boost::asio::awaitable<api_reply> reply);
  boost::asio::awaitable<api_reply> exchange(xconn::adapter::http_request req, std::chrono::seconds timeout);

  api_endpoint endpoint_;
  xconn::adapter::http_client client_;  // one event-loop thread only
  xconn::adapter::rate_limiter limits_;  // by token: a 429's retry_after
  counter count_;
};

}  // namespace telegram

// An HTTP/1.1 client for a target's API, as an adapter's own event loop speaks it: connections kept per scheme, host
// and port and reused; TLS verified against the system store plus options.ca_file with the host name checked; an
// optional http:// (CONNECT) or socks5:// proxy; one deadline per call; JSON and multipart bodies; a download that
// streams its body into a sink under a byte cap. Tokens live in URLs and signatures in headers: no error text here
// ever holds a URL, a request, a header or a body. One event-loop thread only (not thread-safe).
#pragma once

#include <xconn/adapter/endpoint.hpp>
#include <xconn/adapter/http_outcome.hpp>
#include <xconn/adapter/proxy_url.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/verb.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace xconn::adapter {

using header_list = std::vector<std::pair<std::string, std::string>>;

// Not an aggregate on purpose: GCC 12 relocates an aggregate-initialized temporary of a co_await expression bitwise,
// so a short (in-place) string of a braced request built in the call would point into the dead copy and be freed as
// if it were heap memory. A constructor makes the same braces a constructor call, which it does not miscompile.
struct http_request {
  http_request() = default;
  http_request(boost::beast::http::verb method, std::string target, std::string content_type = "",
               std::string body = "", header_list headers = {})
      : method(method), target(std::move(target)), content_type(std::move(content_type)), body(std::move(body)),
        headers(std::move(headers)) {}

  boost::beast::http::verb method = boost::beast::http::verb::post;
  std::string target;        // path and query, e.g. endpoint.base_path + "/bot<token>/getMe": never quoted
  std::string content_type;  // "" for none
  std::string body;
  header_list headers;       // set after Host and User-Agent (a signature, an Authorization)

  static http_request get(std::string target) { return {boost::beast::http::verb::get, std::move(target), "", "", {}}; }
  static http_request head(std::string target) { return {boost::beast::http::verb::head, std::move(target), "", "", {}}; }
  static http_request json_post(std::string target, const boost::json::value& body) {
    return {boost::beast::http::verb::post, std::move(target), "application/json", boost::json::serialize(body), {}};
  }
};

// A multipart/form-data body (RFC 7578) with a random boundary: text fields, then files.
class multipart_form {
 public:
  multipart_form();
  void field(std::string_view name, std::string_view value);
  void file(std::string_view name, std::string_view filename, std::string_view mime_type, std::string_view bytes);
  // The finished POST to target (the form is spent).
  http_request post(std::string target);

 private:
  std::string boundary_;
  std::string body_;
};

// One call's answer. transport_error set: no usable HTTP answer came ("timeout", "resolve_failed", "connect_failed",
// "proxy_refused", "tls_failed", "exchange_failed"; "too_large" for a download past its cap); else the status.
struct http_reply {
  std::string transport_error;
  int status = 0;
  int retry_after_s = -1;    // a Retry-After of whole seconds, when the target sent one
  std::string content_type;
  std::string body;          // the answer's body (a download's non-2xx answer too; its 2xx body went to the sink)
  std::size_t body_bytes = 0;
  header_list headers;       // every header of the answer, as sent (within Beast's 8 KiB header limit)

  // The first header of that name (any case), "" when none.
  std::string header(std::string_view name) const {
    for (const auto& [n, v] : headers)
      if (boost::beast::iequals(n, name)) return v;
    return "";
  }

  bool reached() const { return transport_error.empty(); }
};

// The outage rule over a reply (http_outcome.hpp); understood: false when the adapter could not read its body.
inline http_outcome outcome_of(const http_reply& r, const outcome_rules& rules, bool understood = true) {
  return outcome_of(r.reached() ? r.status : 0, r.retry_after_s, understood, rules);
}

class http_client {
 public:
  struct options {
    std::string ca_file;               // extra PEM certificates to trust, "" for none
    std::optional<proxy_url> proxy;    // every connection tunnels through it
    std::string user_agent = "xconn";
    std::size_t max_idle_per_host = 8;
    std::size_t max_answer_bytes = 8u << 20;  // a longer answer is a transport error (exchange_failed)
  };

  // The error reading options.ca_file, if any, in *error ("config.ca_file: ...", never the file's content).
  http_client(boost::asio::io_context& io, options opts, std::string* error = nullptr);
  ~http_client();
  http_client(const http_client&) = delete;
  http_client& operator=(const http_client&) = delete;

  // Closes the kept connections: before the io_context they belong to goes (the adapter's halt).
  void close_idle();
  std::size_t idle_count() const;

  // to and req are the call's own copies: the call may be awaited after the caller's temporaries are gone.
  boost::asio::awaitable<http_reply> send(endpoint to, http_request req, std::chrono::milliseconds timeout);

  // Like send, but a 2xx body goes to sink chunk by chunk and may be at most max_bytes long (else "too_large" and the
  // connection is dropped); a non-2xx body is kept in the reply as send keeps it.
  using body_sink = std::function<void(std::string_view chunk)>;
  boost::asio::awaitable<http_reply> download(endpoint to, http_request req, std::size_t max_bytes,
                                              body_sink sink, std::chrono::milliseconds timeout);

 private:
  struct connection;
  struct exchange_plan;
  boost::asio::awaitable<std::unique_ptr<connection>> open(const endpoint& to,
                                                           std::chrono::steady_clock::time_point deadline,
                                                           std::string& step);
  boost::asio::awaitable<http_reply> run(const endpoint& to, http_request req, exchange_plan plan,
                                         std::chrono::milliseconds timeout);

  boost::asio::io_context& io_;
  options options_;
  boost::asio::ssl::context tls_;
  std::map<std::string, std::vector<std::unique_ptr<connection>>> idle_;  // by endpoint::pool_key()
};

}  // namespace xconn::adapter

#include "receiver_client.hpp"

namespace webhook {
namespace asio = boost::asio;
namespace ad = xconn::adapter;

namespace {

ad::http_client::options receiver_options(const std::string& ca_file) {
  ad::http_client::options o;
  o.ca_file = ca_file;
  o.user_agent = "xconn-webhook";
  o.max_answer_bytes = 1u << 20;  // a receiver's answer is read and dropped
  return o;
}

}  // namespace

receiver_client::receiver_client(asio::io_context& io, const std::string& ca_file, std::string* error)
    : client_(io, receiver_options(ca_file), error) {}

asio::awaitable<post_result> receiver_client::post(const receiver_url& url, const std::string& body,
                                                   const header_list& headers, std::chrono::milliseconds timeout) {
  ad::http_request req{boost::beast::http::verb::post, url.target, "application/json", body, headers};
  co_return co_await send(url, std::move(req), timeout);
}

asio::awaitable<post_result> receiver_client::head(const receiver_url& url, const header_list& headers,
                                                   std::chrono::milliseconds timeout) {
  auto req = ad::http_request::head(url.target);
  req.headers = headers;
  co_return co_await send(url, std::move(req), timeout);
}

asio::awaitable<post_result> receiver_client::send(const receiver_url& url, ad::http_request req,
                                                   std::chrono::milliseconds timeout) {
  ad::endpoint to;
  to.tls = url.tls;
  to.host = url.host;
  to.port = url.port;
  to.authority = url.authority;
  auto r = co_await client_.send(to, std::move(req), timeout);
  co_return post_result{r.transport_error, r.status, r.retry_after_s};
}

}  // namespace webhook

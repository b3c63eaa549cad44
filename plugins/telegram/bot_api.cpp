#include "bot_api.hpp"

#include <xconn/adapter/limited_call.hpp>

#include <boost/json.hpp>

namespace telegram {
namespace asio = boost::asio;
namespace json = boost::json;
namespace ad = xconn::adapter;

namespace {

// The client's reply in Telegram's answer shape: the body's ok, result, error_code, description and retry_after.
api_reply read_answer(const ad::http_reply& r) {
  api_reply reply;
  reply.transport_error = r.transport_error;
  reply.http_status = r.status;
  if (!r.reached()) return reply;
  json::error_code ec;
  auto v = json::parse(r.body, ec);
  if (ec || !v.is_object()) {
    reply.description = "not a Bot API answer";
    return reply;
  }
  const auto& o = v.as_object();
  if (auto* ok = o.if_contains("ok"); ok && ok->is_bool()) reply.ok = ok->as_bool();
  if (auto* res = o.if_contains("result")) reply.result = *res;
  if (auto* c = o.if_contains("error_code"); c && c->is_int64()) reply.error_code = static_cast<int>(c->as_int64());
  if (auto* d = o.if_contains("description"); d && d->is_string()) reply.description = std::string(d->as_string()).substr(0, 200);
  if (auto* p = o.if_contains("parameters"); p && p->is_object())
    if (auto* ra = p->as_object().if_contains("retry_after"); ra && ra->is_int64())
      reply.retry_after_s = static_cast<int>(ra->as_int64());
  return reply;
}

std::optional<std::chrono::seconds> rate_limit_of(const api_reply& r) {
  return r.http_status == 429 ? std::optional(std::chrono::seconds(r.retry_after_s)) : std::nullopt;
}

}  // namespace

ad::http_client::options bot_api::options_for(const std::string& ca_file, std::optional<proxy_url> proxy) {
  ad::http_client::options o;
  o.ca_file = ca_file;
  o.proxy = std::move(proxy);
  o.user_agent = "xconn-telegram";
  o.max_idle_per_host = 4;  // kept for reuse; a long poll holds one more while it waits
  return o;
}

bot_api::bot_api(asio::io_context& io, api_endpoint endpoint, const std::string& ca_file, std::string* error,
                 std::optional<proxy_url> proxy, counter count)
    : endpoint_(std::move(endpoint)), client_(io, options_for(ca_file, std::move(proxy)), error),
      count_(std::move(count)) {}

asio::awaitable<api_reply> bot_api::counted(const std::string& method, asio::awaitable<api_reply> reply) {
  auto r = co_await std::move(reply);
  for (const auto& [name, n] : counters_of(method, r))
    if (n > 0) count_(name, n);
  co_return r;
}

asio::awaitable<api_reply> bot_api::exchange(ad::http_request req, std::chrono::seconds timeout) {
  co_return read_answer(co_await client_.send(endpoint_, std::move(req), timeout));
}

asio::awaitable<api_reply> bot_api::call(const std::string& token, const std::string& method,
                                         const json::object& params, std::chrono::seconds timeout,
                                         time_point deadline) {
  auto target = endpoint_.base_path + "/bot" + token + "/" + method;
  co_return co_await ad::limited_call_until(
      limits_, token, deadline,
      [&] { return counted(method, exchange(ad::http_request::json_post(target, params), timeout)); }, rate_limit_of);
}

asio::awaitable<api_reply> bot_api::upload(const std::string& token, const std::string& method,
                                           const json::object& fields, const file_part& file,
                                           std::chrono::seconds timeout) {
  ad::multipart_form form;
  for (const auto& f : fields)
    form.field(f.key(), f.value().is_string() ? std::string(f.value().as_string()) : json::serialize(f.value()));
  form.file(file.field, file.filename, file.mime_type, file.bytes);
  auto req = form.post(endpoint_.base_path + "/bot" + token + "/" + method);
  co_return co_await ad::limited_call(
      limits_, token, [&] { return counted(method, exchange(std::move(req), timeout)); }, rate_limit_of);
}

asio::awaitable<std::optional<std::string>> bot_api::fetch_file(const std::string& token, const std::string& file_id,
                                                                std::size_t max_bytes, std::chrono::seconds timeout) {
  json::object params{{"file_id", file_id}};
  auto info = co_await call(token, "getFile", params, timeout);
  auto* path = info.ok && info.result.is_object() ? info.result.as_object().if_contains("file_path") : nullptr;
  if (!path || !path->is_string() || path->as_string().empty()) co_return std::nullopt;
  std::string bytes;
  auto req = ad::http_request::get(endpoint_.base_path + "/file/bot" + token + "/" + std::string(path->as_string()));
  ad::http_client::body_sink sink = [&bytes](std::string_view chunk) { bytes.append(chunk); };
  auto r = co_await client_.download(endpoint_, std::move(req), max_bytes, std::move(sink), timeout);
  if (!r.reached() || r.status != 200) co_return std::nullopt;
  co_return bytes;
}

}  // namespace telegram

#include "ilink_api.hpp"

#include "ilink_crypto.hpp"

#include <boost/json.hpp>

#include <charconv>

namespace wechat {
namespace asio = boost::asio;
namespace json = boost::json;
namespace ad = xconn::adapter;
using namespace std::chrono_literals;

namespace {

constexpr auto qr_timeout = 8s;
constexpr auto qr_status_timeout = 5s;
constexpr auto cdn_timeout = 30s;

std::string url_encoded(std::string_view s) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

// The answer in iLink's shape: ret, else errcode, and errmsg, from a JSON object body.
ilink_reply read_answer(const ad::http_reply& r) {
  ilink_reply reply;
  reply.transport_error = r.transport_error;
  reply.http_status = r.status;
  if (!r.reached()) return reply;
  json::error_code ec;
  auto v = json::parse(r.body, ec);
  if (ec || !v.is_object()) return reply;
  reply.understood = true;
  reply.body = std::move(v.as_object());
  auto number = [&](std::string_view key) {
    auto* n = reply.body.if_contains(key);
    return n && n->is_int64() ? static_cast<int>(n->as_int64()) : 0;
  };
  reply.ret = number("ret") != 0 ? number("ret") : number("errcode");
  if (auto* m = reply.body.if_contains("errmsg"); m && m->is_string()) reply.errmsg = std::string(m->as_string()).substr(0, 200);
  return reply;
}

}  // namespace

std::string client_version_of(std::string_view version) {
  unsigned parts[3] = {0, 0, 0};
  const char* at = version.data();
  const char* end = version.data() + version.size();
  for (unsigned& p : parts) {
    auto [next, ec] = std::from_chars(at, end, p);
    if (ec != std::errc()) break;
    at = next < end && *next == '.' ? next + 1 : end;
  }
  return std::to_string((parts[0] & 0xff) << 16 | (parts[1] & 0xff) << 8 | (parts[2] & 0xff));
}

ilink_api::ilink_api(asio::io_context& io, endpoint api, endpoint cdn, ad::http_client::options options,
                     std::string_view version, std::string* error)
    : api_(std::move(api)), cdn_(std::move(cdn)), client_version_(client_version_of(version)), version_(version),
      client_(io, [&] {
        options.user_agent = "xconn-wechat/" + std::string(version);
        return std::move(options);
      }(), error) {}

std::optional<endpoint> ilink_api::redirected(std::string_view host) const {
  auto e = endpoint::parse(std::string(api_.tls ? "https://" : "http://") + std::string(host));
  if (!e || !e->base_path.empty()) return std::nullopt;
  return e;
}

endpoint ilink_api::bot_base(std::string_view baseurl) const {
  auto e = endpoint::parse(baseurl);
  return e && (e->tls || !api_.tls) ? *e : api_;  // never from TLS down to plain HTTP
}

std::optional<std::pair<endpoint, std::string>> ilink_api::followable(std::string_view url) const {
  auto query = url.find('?');
  auto base = endpoint::parse(url.substr(0, query));
  if (!base) return std::nullopt;
  bool known = false;
  for (const auto* own : {&api_, &cdn_}) known |= base->tls == own->tls && base->host == own->host && base->port == own->port;
  if (!known) return std::nullopt;
  auto target = base->base_path.empty() ? std::string("/") : base->base_path;
  if (query != std::string_view::npos) target += std::string(url.substr(query));
  base->base_path.clear();
  return std::pair{*base, target};
}

ad::http_request ilink_api::with_headers(ad::http_request req, const std::string& token) const {
  req.headers = {{"iLink-App-Id", "bot"}, {"iLink-App-ClientVersion", client_version_}};
  if (req.method == boost::beast::http::verb::get) return req;
  req.headers.emplace_back("AuthorizationType", "ilink_bot_token");
  req.headers.emplace_back("X-WECHAT-UIN", wechat_uin());
  if (!token.empty()) req.headers.emplace_back("Authorization", "Bearer " + token);
  return req;
}

asio::awaitable<ilink_reply> ilink_api::get_qrcode(const json::array& local_tokens) {
  auto req = with_headers(ad::http_request::json_post(api_.base_path + "/ilink/bot/get_bot_qrcode?bot_type=3",
                                                      json::object{{"local_token_list", local_tokens}}),
                          "");
  co_return read_answer(co_await client_.send(api_, std::move(req), qr_timeout));
}

asio::awaitable<ilink_reply> ilink_api::qrcode_status(endpoint at, std::string qrcode) {
  auto req = with_headers(
      ad::http_request::get(at.base_path + "/ilink/bot/get_qrcode_status?qrcode=" + url_encoded(qrcode)), "");
  co_return read_answer(co_await client_.send(at, std::move(req), qr_status_timeout));
}

asio::awaitable<ilink_reply> ilink_api::bot_call(std::string baseurl, std::string token, std::string path,
                                                 json::object body, std::chrono::milliseconds timeout) {
  const auto base = bot_base(baseurl);
  body["base_info"] = json::object{{"channel_version", version_}, {"bot_agent", "xconn/" + version_}};
  auto req = with_headers(ad::http_request::json_post(base.base_path + "/ilink/bot/" + path, body), token);
  co_return read_answer(co_await client_.send(base, std::move(req), timeout));
}

asio::awaitable<std::optional<std::string>> ilink_api::download(media_item media, std::size_t max_bytes,
                                                                std::string* why) {
  *why = "download_failed";
  std::optional<std::pair<endpoint, std::string>> from;
  if (!media.full_url.empty()) from = followable(media.full_url);
  if (!from && !media.query_param.empty())
    from = std::pair{cdn_, cdn_.base_path + "/download?encrypted_query_param=" + url_encoded(media.query_param)};
  if (!from || media.bad_key) {
    if (media.bad_key) *why = "bad_key";
    co_return std::nullopt;
  }
  std::string body;
  ad::http_client::body_sink sink = [&body](std::string_view chunk) { body.append(chunk); };
  // The ciphertext is at most one block longer than the file.
  auto r = co_await client_.download(from->first, ad::http_request::get(from->second), max_bytes + 16,
                                     std::move(sink), cdn_timeout);
  if (r.transport_error == "too_large") *why = "too_large";
  if (!r.reached() || r.status != 200) co_return std::nullopt;
  if (media.key.empty()) co_return body;  // no key: the CDN serves the file as it is
  auto plain = aes_ecb_decrypt(media.key, body);
  if (!plain) *why = "bad_key";
  co_return plain;
}

asio::awaitable<std::optional<std::string>> ilink_api::upload(json::object upload_url, std::string filekey,
                                                              std::string cipher) {
  std::optional<std::pair<endpoint, std::string>> to;
  if (auto* full = upload_url.if_contains("upload_full_url"); full && full->is_string() && !full->as_string().empty())
    to = followable(full->as_string());
  else if (auto* param = upload_url.if_contains("upload_param"); param && param->is_string() && !param->as_string().empty())
    to = std::pair{cdn_, cdn_.base_path + "/upload?encrypted_query_param=" + url_encoded(param->as_string()) +
                             "&filekey=" + url_encoded(filekey)};
  if (!to) co_return std::nullopt;
  ad::http_request req(boost::beast::http::verb::post, to->second, "application/octet-stream", std::move(cipher));
  auto r = co_await client_.send(to->first, std::move(req), cdn_timeout);
  auto param = r.header("x-encrypted-param");
  if (!r.reached() || r.status != 200 || param.empty()) co_return std::nullopt;
  co_return param;
}

}  // namespace wechat

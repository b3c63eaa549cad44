// WeChat's iLink bot API and its media CDN over the adapter layer's HTTP client: the QR sign-in calls, the bot calls
// (each a JSON POST with the iLink headers, the bearer token and base_info) and the CDN's encrypted upload and
// download. Business answers ride in `ret`/`errcode` with HTTP 200; -14 means the bot's session is over. A URL the
// target hands out (a media's full_url, an upload URL) is followed only to the API's or the CDN's own host and port.
// The bot token is in a header: no error text here ever holds a header, a URL or a body.
#pragma once

#include "ilink_messages.hpp"

#include <xconn/adapter/endpoint.hpp>
#include <xconn/adapter/http_client.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/object.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace wechat {

using xconn::adapter::endpoint;

// One iLink answer: no HTTP answer (transport_error), an HTTP status, or a JSON body with its ret.
struct ilink_reply {
  std::string transport_error;  // "timeout", "connect_failed", ... never with a URL
  int http_status = 0;
  bool understood = false;      // the body was a JSON object
  int ret = 0;                  // ret, else errcode: 0 done, -14 session over, -2 a send WeChat's rules refused
  std::string errmsg;           // WeChat's words: for the log only, never for the host's answers
  boost::json::object body;

  bool reached() const { return transport_error.empty(); }
  bool ok() const { return reached() && http_status == 200 && understood && ret == 0; }
  bool session_over() const { return reached() && understood && ret == -14; }
  // No answer, a 5xx or a body that is not iLink's: asked again later, never read as a refusal.
  bool unreachable() const { return !reached() || http_status >= 500 || (http_status == 200 && !understood); }
};

// The iLink client version every request names (major << 16 | minor << 8 | patch, in decimal).
std::string client_version_of(std::string_view version);

class ilink_api {
 public:
  // version: the plugin's, named in the headers and base_info. The error reading ca_file, if any, in *error.
  ilink_api(boost::asio::io_context& io, endpoint api, endpoint cdn, xconn::adapter::http_client::options options,
            std::string_view version, std::string* error);

  void close_idle() { client_.close_idle(); }
  const endpoint& api() const { return api_; }
  // The API host a QR poll is sent to after a scaned_but_redirect: the API's scheme, the given host[:port].
  std::optional<endpoint> redirected(std::string_view host) const;
  // A bot's own API base (the baseurl of its sign-in), when it is the API's host or a well-formed https URL.
  endpoint bot_base(std::string_view baseurl) const;

  boost::asio::awaitable<ilink_reply> get_qrcode(const boost::json::array& local_tokens);
  boost::asio::awaitable<ilink_reply> qrcode_status(endpoint at, std::string qrcode);
  // POST <the bot's base>/ilink/bot/<path> with the bot's token; body gets base_info. baseurl: the bot's own API
  // base (bot_base).
  boost::asio::awaitable<ilink_reply> bot_call(std::string baseurl, std::string token, std::string path,
                                               boost::json::object body, std::chrono::milliseconds timeout);

  // A message's media from the CDN, decrypted; nullopt with *why ("download_failed", "bad_key", "too_large").
  boost::asio::awaitable<std::optional<std::string>> download(media_item media, std::size_t max_bytes,
                                                              std::string* why);
  // Ciphertext to the CDN at the upload URL getuploadurl answered (upload_full_url, else upload_param with the
  // filekey); the download parameter the CDN answers with (x-encrypted-param), or nullopt.
  boost::asio::awaitable<std::optional<std::string>> upload(boost::json::object upload_url, std::string filekey,
                                                            std::string cipher);

 private:
  std::optional<std::pair<endpoint, std::string>> followable(std::string_view url) const;
  xconn::adapter::http_request with_headers(xconn::adapter::http_request req, const std::string& token) const;

  endpoint api_, cdn_;
  std::string client_version_, version_;
  xconn::adapter::http_client client_;  // the adapter's loop only
};

}  // namespace wechat

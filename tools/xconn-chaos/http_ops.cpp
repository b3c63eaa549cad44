#include "http_ops.hpp"

#include "wire.hpp"

#include "core/base/crypto.hpp"

#include <boost/json.hpp>

namespace xconn::chaos {
namespace json = boost::json;

namespace {
std::map<std::string, std::string> keyed(const target& t) { return {{"Authorization", "Bearer " + t.key}}; }

std::string number_text(const json::object& o, const char* name) {
  auto* v = o.if_contains(name);
  return v && v->is_number() ? json::serialize(*v) : std::string("?");
}

long long count_at(const json::object& o, const char* name) {
  auto* v = o.if_contains(name);
  return v && v->is_int64() ? v->get_int64() : (v && v->is_uint64() ? static_cast<long long>(v->get_uint64()) : 0);
}
}  // namespace

inject_result inject(const target& t, const std::string& channel, const std::string& msg_id, bool with_file) {
  json::object body{{"connector_channel_id", channel}, {"text", "chaos inject " + msg_id}, {"msg_id", msg_id},
                    {"sender_id", "chaos"}};
  // A fixed attachment: "chaos attachment\n" in base64.
  if (with_file)
    body["files"] = json::array{json::object{
        {"content_base64", "Y2hhb3MgYXR0YWNobWVudAo="}, {"filename", msg_id + ".txt"}, {"mime_type", "text/plain"}}};
  auto a = http_request(t.port, "POST", "/connectors/echo/inject", keyed(t), json::serialize(body));
  inject_result r;
  r.status = a.status;
  auto v = a.json();
  if (a.status == 202 && v.is_object()) {
    r.message_id = text_at(v.as_object(), "message_id");
    auto* d = v.as_object().if_contains("duplicate");
    r.duplicate = d && d->is_bool() && d->get_bool();
  }
  return r;
}

upload_result upload(const target& t, const std::string& channel, const std::string& bytes) {
  const std::string boundary = "chaosboundary7d1f3a";
  std::string body = "--" + boundary +
                     "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"chaos.bin\"\r\n"
                     "Content-Type: application/octet-stream\r\n\r\n" +
                     bytes + "\r\n--" + boundary + "--\r\n";
  auto headers = keyed(t);
  headers["Content-Type"] = "multipart/form-data; boundary=" + boundary;
  headers["X-XAgent-Connector-Channel-ID"] = channel;
  auto a = http_request(t.port, "POST", "/connectors/echo/files/uploads", headers, body);
  upload_result r;
  r.status = a.status;
  auto v = a.json();
  if (a.status == 201 && v.is_object()) {
    const auto& o = v.as_object();
    r.file_ref = text_at(o, "file_ref");
    r.sha256 = text_at(o, "sha256");
    r.expires_at = number_text(o, "expires_at");
    r.byte_size = number_text(o, "byte_size");
  }
  return r;
}

download_result download(const target& t, const std::string& file_ref) {
  auto a = http_request(t.port, "GET", "/connectors/echo/files/refs/" + file_ref, keyed(t), "");
  download_result r;
  r.status = a.status;
  if (a.status == 200) r.sha256 = xconn::sha256_hex(a.body);
  return r;
}

std::optional<inbound_counters> inbound_health(const target& t) {
  auto a = http_request(t.port, "GET", "/connectors/echo/health", keyed(t), "");
  auto v = a.json();
  if (a.status != 200 || !v.is_object()) return std::nullopt;
  auto* in = v.as_object().if_contains("inbound");
  if (!in || !in->is_object()) return std::nullopt;
  const auto& o = in->get_object();
  inbound_counters c;
  c.pending = count_at(o, "pending");
  c.expired = count_at(o, "expired");
  c.evicted = count_at(o, "evicted");
  c.rejected = count_at(o, "rejected");
  return c;
}

}  // namespace xconn::chaos

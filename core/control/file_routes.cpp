#include "core/control/file_routes.hpp"

#include "core/channels/channel_service.hpp"
#include "core/context/access.hpp"
#include "core/files/download_links.hpp"
#include "core/files/multipart_reader.hpp"

#include <boost/json.hpp>

#include <charconv>
#include <optional>

namespace xconn {
namespace http = boost::beast::http;

namespace {

constexpr std::string_view uploads_path = "/files/uploads";
constexpr std::string_view refs_prefix = "/files/refs/";
constexpr std::string_view channel_header = "X-XAgent-Connector-Channel-ID";

// Content-Disposition with an ASCII fallback and the exact UTF-8 name (RFC 6266, RFC 8187).
std::string content_disposition(std::string_view name) {
  std::string fallback, encoded;
  static constexpr char hex[] = "0123456789ABCDEF";
  for (unsigned char c : name) {
    bool plain = std::isalnum(c) || std::string_view("!#$&+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
    if (plain) {
      encoded.push_back(static_cast<char>(c));
    } else {
      encoded.push_back('%');
      encoded.push_back(hex[c >> 4]);
      encoded.push_back(hex[c & 15]);
    }
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
      fallback.push_back(static_cast<char>(c));
    else if ((c & 0xC0) != 0x80)  // one '_' per non-ASCII character, not per byte
      fallback.push_back('_');
  }
  return "attachment; filename=\"" + fallback + "\"; filename*=UTF-8''" + encoded;
}

http_response bare(const http_request& req, http::status status) {
  http_response res{status, req.version()};
  res.set(http::field::server, "xconn");
  res.keep_alive(req.keep_alive());
  return res;
}

template <class Response>
void describe(Response& res, const stored_file& f) {
  res.set(http::field::server, "xconn");
  res.set(http::field::etag, "\"" + f.sha256 + "\"");
  res.set(http::field::accept_ranges, "bytes");
  res.set(http::field::cache_control, "private");
  res.set("X-Content-Type-Options", "nosniff");
}

file_answer download(server_context& ctx, const http_request& req, const stored_file& f) {
  std::string etag = "\"" + f.sha256 + "\"";
  if (auto match = req.find(http::field::if_none_match); match != req.end() && match->value().find(etag) != std::string_view::npos) {
    auto res = bare(req, http::status::not_modified);
    describe(res, f);
    return res;
  }
  byte_range range{0, f.byte_size == 0 ? 0 : f.byte_size - 1};
  bool partial = false;
  if (auto header = req.find(http::field::range); header != req.end()) {
    if (auto r = parse_range(header->value(), f.byte_size)) {
      if (!r->satisfiable()) {
        auto res = error_response(req, http::status::range_not_satisfiable, "range_not_satisfiable",
                                  "the range lies outside the file");
        res.set(http::field::content_range, "bytes */" + std::to_string(f.byte_size));
        return res;
      }
      range = *r;
      partial = true;
    }
  }
  std::uint64_t length = f.byte_size == 0 ? 0 : range.last - range.first + 1;
  auto status = partial ? http::status::partial_content : http::status::ok;
  auto headers = [&](auto& res) {
    describe(res, f);
    res.set(http::field::content_type, f.mime_type);
    res.set(http::field::content_disposition, content_disposition(f.filename));
    if (partial)
      res.set(http::field::content_range, "bytes " + std::to_string(range.first) + "-" + std::to_string(range.last) +
                                               "/" + std::to_string(f.byte_size));
    res.keep_alive(req.keep_alive());
  };
  if (req.method() == http::verb::head) {
    http_response res{status, req.version()};
    headers(res);
    res.content_length(length);
    return res;
  }
  file_response res{status, req.version()};
  headers(res);
  res.body() = {&ctx.files, f, range.first, length};
  res.prepare_payload();
  return res;
}

}  // namespace

bool is_upload_path(const connector_path& p) { return p.rest == uploads_path; }
bool is_file_ref_path(const connector_path& p) { return p.rest.substr(0, refs_prefix.size()) == refs_prefix; }

void serve_file_ref(server_context& ctx, const http_request& req, std::function<void(file_answer)> reply) {
  auto parts = split_connector_path(req.target());
  auto ref = parts.rest.substr(refs_prefix.size());
  auto method = req.method();
  bool with_key = authorized(ctx, req);
  auto fail = [&](http::status status, std::string_view code, std::string_view message) {
    reply(error_response(req, status, code, message));
  };
  if (method != http::verb::get && method != http::verb::head && method != http::verb::delete_) {
    if (!with_key) return fail(http::status::unauthorized, "unauthorized", "a valid API key is required");
    return fail(http::status::method_not_allowed, "method_not_allowed", "use GET, HEAD or DELETE");
  }
  if (!with_key) {
    auto exp = query_param(req.target(), "exp"), sig = query_param(req.target(), "sig");
    if (method == http::verb::delete_ || (exp.empty() && sig.empty()))
      return fail(http::status::unauthorized, "unauthorized", "a valid API key or a signed download URL is required");
    if (!ctx.links.verify(parts.plugin_id, ref, exp, sig, ctx.files.now() / 1000))
      return fail(http::status::forbidden, "invalid_signature", "the download URL is not valid or has expired");
  }
  auto f = ctx.files.find(ref);
  if (!f || f->plugin_id != parts.plugin_id)
    return fail(http::status::not_found, "file_not_found", "no such file (it may have expired)");
  if (with_key) {
    if (auto named = req.find(channel_header); named != req.end() && named->value() != f->channel_id)
      return fail(http::status::forbidden, "file_ref_forbidden", "the file belongs to another channel");
  }
  if (method != http::verb::delete_) return reply(download(ctx, req, *f));
  // Answered once the record's erase is durable, so a GET after the 204 never finds the file.
  ctx.files.remove(f->file_ref, [gone = bare(req, http::status::no_content),
                                  missing = error_response(req, http::status::not_found, "file_not_found", "no such file"),
                                  failed = error_response(req, http::status::insufficient_storage, "store_failed",
                                                          "the file could not be removed now; try again"),
                                  reply = std::move(reply)](file_store::remove_outcome outcome) {
    using enum file_store::remove_outcome;
    reply(outcome == removed ? gone : outcome == not_found ? missing : failed);
  });
}

std::variant<http_response, upload_target> check_upload(server_context& ctx, const http_request_header& req) {
  if (!authorized(ctx, req))
    return error_response(req, http::status::unauthorized, "unauthorized", "a valid API key is required");
  if (req.method() != http::verb::post)
    return error_response(req, http::status::method_not_allowed, "method_not_allowed", "use POST");
  auto parts = split_connector_path(req.target());
  auto channel = req.find(channel_header);
  if (channel == req.end() || channel->value().empty())
    return error_response(req, http::status::bad_request, "connector_channel_id_required",
                          "name the channel in X-XAgent-Connector-Channel-ID");
  std::string channel_id(channel->value());
  auto where = ctx.channels.route_of(channel_id);
  if (!where || where->plugin_id != parts.plugin_id)
    return error_response(req, http::status::not_found, "connection_not_found", "no such channel on this connector");
  if (!where->authenticated)
    return error_response(req, http::status::forbidden, "connection_not_authenticated",
                          "the channel is not signed in");
  auto type = req.find(http::field::content_type);
  auto boundary = type == req.end() ? std::nullopt : multipart_boundary(type->value());
  if (!boundary)
    return error_response(req, http::status::bad_request, "invalid_multipart",
                          "send multipart/form-data with a boundary");
  if (auto length = req.find(http::field::content_length); length != req.end()) {
    auto n = parse_u64(length->value());
    if (n && *n > ctx.cfg.files.max_bytes + upload_overhead_bytes)
      return error_response(req, http::status::payload_too_large, "payload_too_large",
                            "over files.max_bytes (" + std::to_string(ctx.cfg.files.max_bytes) + " bytes)");
  }
  return upload_target{std::string(parts.plugin_id), std::move(channel_id), std::move(*boundary)};
}

http_response upload_created(server_context& ctx, const http_request_header& req, const stored_file& f) {
  long long url_expiry_s = ctx.files.now() / 1000 + ctx.cfg.files.url_ttl_s;
  auto body = f.item();
  body["file_type"] = body["type"];
  body.erase("type");
  body["sha256"] = f.sha256;
  body["download_url"] = ctx.links.url(ctx.public_base_url, f.plugin_id, f.file_ref, url_expiry_s);
  return json_response(req, http::status::created, boost::json::serialize(body));
}

}  // namespace xconn

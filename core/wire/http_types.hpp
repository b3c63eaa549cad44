// The HTTP message types every part of the host speaks (Beast, string bodies for the control plane).
#pragma once

#include <boost/beast/http.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace xconn {

using http_request = boost::beast::http::request<boost::beast::http::string_body>;
using http_request_header = boost::beast::http::request_header<>;
using http_response = boost::beast::http::response<boost::beast::http::string_body>;

// Whether the client wants the connection kept after this request (HTTP/1.1 default, Connection tokens).
bool keeps_alive(const http_request_header& req);

// A JSON response with the given status.
http_response json_response(const http_request_header& req, boost::beast::http::status status, std::string body);
// {"error":{"code","message"}} with the given status.
http_response error_response(const http_request_header& req, boost::beast::http::status status, std::string_view code,
                             std::string_view message);

// /connectors/{plugin_id}/{rest}: the parts of a target path (query removed). plugin_id empty when the
// path is not under /connectors/{id}.
struct connector_path {
  std::string_view plugin_id;
  std::string_view rest;  // after "/connectors/{id}", e.g. "/health"; "" for the base itself
};
connector_path split_connector_path(std::string_view target);

// The value of the first query parameter called name ("" when absent), as sent: for values of digits and hex,
// which are never percent-encoded.
std::string_view query_param(std::string_view target, std::string_view name);
// Decimal digits only (at most 19), nothing else.
std::optional<std::uint64_t> parse_u64(std::string_view s);

// One byte range of a file of `size` bytes (RFC 9110 §14.1.2). nullopt: no usable Range (malformed, several
// ranges): send it all. first > last: not satisfiable.
struct byte_range {
  std::uint64_t first = 0, last = 0;
  bool satisfiable() const { return first <= last; }
};
std::optional<byte_range> parse_range(std::string_view header, std::uint64_t size);

}  // namespace xconn

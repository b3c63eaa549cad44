// The HTTP message types every part of the host speaks (Beast, string bodies for the control plane).
#pragma once

#include <boost/beast/http.hpp>

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

}  // namespace xconn

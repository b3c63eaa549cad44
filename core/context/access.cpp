#include "core/context/access.hpp"

namespace xconn {

http_response unauthorized(const http_request_header& req) {
  return error_response(req, boost::beast::http::status::unauthorized, "unauthorized",
                        "a valid API key is required (Authorization: Bearer <key>)");
}

bool authorized(const server_context& ctx, const http_request_header& req) {
  auto it = req.find(boost::beast::http::field::authorization);
  return it != req.end() && ctx.keys.authorizes(it->value());
}

}  // namespace xconn

// Every HTTP route of the host in one table, in the order a request is matched against it (docs/protocol.md "One
// server, many connectors", "Files", §6): the first row whose match accepts the request's header serves it. A row says
// how the session reads the body (upgrade to the data plane, stream an upload, or read it whole), who may call it and
// with which method.
#pragma once

#include "core/context/server_context.hpp"
#include "core/control/file_routes.hpp"
#include "core/wire/http_types.hpp"

#include <functional>
#include <string_view>

namespace xconn {

// Takes the answer once, from any thread.
using answer_fn = std::function<void(file_answer)>;

// upgrade: a WebSocket; streamed: an upload read as it comes; backup: a bodiless GET answered by a stream of its
// own; whole: read whole, then answered.
enum class route_body { upgrade, streamed, backup, whole };
// Who may call a row, decided on the header before any body is read: key (a valid API key), anyone, signed_url
// (GET/HEAD may come with a signed download URL instead of the key), plugin_declared (the plugin's route says
// whether it is public), public_documents (the public documents' paths only). The row's serve checks again.
enum class route_access { key, anyone, signed_url, plugin_declared, public_documents };

struct route_entry {
  std::string_view name;  // method and path as the documents write them
  route_body body;
  route_access access;
  boost::beast::http::verb method;  // unknown: the route checks the method itself
  bool (*match)(server_context& ctx, const http_request_header& req, const connector_path& at);
  // For whole-body routes; the session runs the others itself.
  void (*serve)(server_context& ctx, const http_request& req, const connector_path& at, answer_fn answer);
};

// The row that serves req; the last row takes whatever no other does.
const route_entry& route_for(server_context& ctx, const http_request_header& req);

// Whether the row may serve req without a valid API key (then its body counts against the public budget); when not,
// a keyless req is answered 401 from its header alone.
bool open_without_key(const route_entry& route, server_context& ctx, const http_request_header& req);

// Checks the row's access and method, then serves a whole-body request.
void serve_route(const route_entry& route, server_context& ctx, const http_request& req, answer_fn answer);

}  // namespace xconn

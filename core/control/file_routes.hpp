// The transfer plane's HTTP answers (spec §5, docs/protocol.md "Files"): downloads (with the key or a signed URL,
// Range, ETag, Content-Disposition), deletes, and the checks an upload passes before its body is read.
#pragma once

#include "core/files/file_body.hpp"
#include "core/wire/http_types.hpp"
#include "core/context/server_context.hpp"

#include <functional>
#include <string>
#include <variant>

namespace xconn {

// Room for the multipart framing and small fields on top of files.max_bytes in an upload's body.
inline constexpr std::uint64_t upload_overhead_bytes = 64 * 1024;

bool is_upload_path(const connector_path& p);     // {base}/files/uploads
bool is_file_ref_path(const connector_path& p);   // {base}/files/refs/...

// GET, HEAD or DELETE {base}/files/refs/{file_ref}. reply runs once, possibly on the store's writer thread.
using file_answer = std::variant<http_response, file_response>;
void serve_file_ref(server_context& ctx, const http_request& req, std::function<void(file_answer)> reply);

// What an upload may go on with, decided from its header alone: an error answer, or where the file goes.
struct upload_target {
  std::string plugin_id;
  std::string channel_id;
  std::string boundary;
};
std::variant<http_response, upload_target> check_upload(server_context& ctx, const http_request_header& req);

// The 201 body for a stored upload.
http_response upload_created(server_context& ctx, const http_request_header& req, const stored_file& f);

}  // namespace xconn

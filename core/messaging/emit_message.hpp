// Reads one plugin emit (seed 002's ctx.emit, plugin.h xconn_host_emit) into an inbound message, or says
// exactly which field is wrong. A refused emit stores nothing.
#pragma once

#include "core/messaging/inbox.hpp"
#include "core/plugin_host/plugin_manifest.hpp"

#include <boost/system/result.hpp>

#include <string>
#include <string_view>

namespace xconn {

// Limits on one emit (bytes of UTF-8), documented in docs/protocol.md "Inbound messages".
inline constexpr std::size_t emit_max_bytes = 256 * 1024;
inline constexpr std::size_t emit_max_text_bytes = 64 * 1024;
inline constexpr std::size_t emit_max_field_bytes = 256;
inline constexpr std::size_t emit_max_files = 16;

// The fields of m a plugin gives (text, channel_key (defaulted), sender, msg_id, at, trigger, context_text, role,
// modality, files as bare file_refs); the caller adds ids and times. The error is "field: why", with no value in it.
boost::system::result<inbound_message, std::string> parse_emit(std::string_view json, const plugin_manifest& manifest);

}  // namespace xconn

// What a plugin call's answer becomes on the data plane: the error a failed call shows, a tool's outcome and whether
// it may be replayed, the tool.invoke.ack (with the files a result names, described and signed), and a running
// tool's progress as tool.progress.push.
#pragma once

#include "core/channels/tool_calls.hpp"
#include "core/files/file_store.hpp"
#include "core/plugin_host/plugin_generation.hpp"
#include "core/wire/packet.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace xconn {

// A failed plugin call on the wire: its own stable code, or the host's for a throw or a timeout ("tool" or "auth"
// names the call). A thrown text never leaves the log; a business message is redacted of the server's secrets.
void set_call_error(outgoing_packet& out, const call_result& r, std::string_view what);

tool_outcome outcome_of(call_result r);
// Only a definite answer may be replayed: after a timeout or a throw nobody knows whether the side effect happened,
// and a retryable failure should run again.
bool replayable(const call_result& r);

// The tool's result (a JSON object, its "files" described by the store with download URLs signed now) or its
// error, into the tool.invoke.ack.
void answer_tool(outgoing_packet& ack, tool_outcome o, const std::string& plugin_id, const std::string& channel_id,
                 const file_lookup& files);

// The plugin's progress report ({"message", "progress"}) as tool.progress.push; nullopt when malformed.
std::optional<outgoing_packet> progress_push(std::string_view report, const std::string& tool_id,
                                             const std::string& channel_id, const std::string& tool_call_id);

}  // namespace xconn

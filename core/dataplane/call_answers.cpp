#include "core/dataplane/call_answers.hpp"

#include "core/base/log.hpp"
#include "core/wire/json_object_check.hpp"

#include <boost/json.hpp>
#include <spdlog/spdlog.h>

namespace xconn {
namespace json = boost::json;

namespace {

// A result's "files" ([{"file_ref"}], files the plugin stored on the channel) as the store describes them, each with
// a download_url signed now (Device Profile v1 §6); "" when done, else why the result cannot go out.
std::string describe_result_files(json::object& result, const std::string& plugin_id, const std::string& channel_id,
                                  const file_lookup& files) {
  auto* listed = result.if_contains("files");
  if (!listed) return {};
  if (!listed->is_array() || listed->as_array().size() > 64) return "files must be an array of at most 64 file refs";
  for (auto& f : listed->as_array()) {
    auto* ref = f.is_object() ? f.as_object().if_contains("file_ref") : nullptr;
    if (!ref || !ref->is_string()) return "each file must be an object with a file_ref";
    auto item = files.item ? files.item(plugin_id, channel_id, ref->as_string()) : std::nullopt;
    if (!item) return "a file_ref is not a file of this channel";
    (*item)["download_url"] = files.download_url(plugin_id, ref->as_string());
    f = std::move(*item);
  }
  return {};
}

}  // namespace

void set_call_error(outgoing_packet& out, const call_result& r, std::string_view what) {
  if (r.timed_out) {
    out.error_code = std::string(what) + "_timeout";
    out.error_message = "the connector did not answer in time";
  } else if (r.thrown) {
    out.error_code = what == "tool" ? "tool_invoke_failed" : "auth_failed";
    out.error_message = "the connector failed to run the request";
  } else {
    out.error_code = r.code;
    out.error_message = log::redact(r.message);
  }
}

tool_outcome outcome_of(call_result r) {
  tool_outcome o;
  o.ok = r.ok;
  if (r.ok) {
    o.result_json = std::move(r.json);
    return o;
  }
  outgoing_packet tmp;
  set_call_error(tmp, r, "tool");
  o.code = std::move(tmp.error_code);
  o.message = std::move(tmp.error_message);
  return o;
}

bool replayable(const call_result& r) { return !r.timed_out && !r.thrown && (r.ok || !r.retryable); }

void answer_tool(outgoing_packet& ack, tool_outcome o, const std::string& plugin_id, const std::string& channel_id,
                 const file_lookup& files) {
  if (!o.ok) {
    ack.error_code = std::move(o.code);
    ack.error_message = std::move(o.message);
    return;
  }
  // Most results name no files: checked as JSON and passed on as they came, with no DOM built.
  if (check_json_object(o.result_json, "files") == json_object_check::object) {
    ack.raw_member_name = "result";
    ack.raw_member_json = std::move(o.result_json);
    return;
  }
  boost::system::error_code ec;
  auto result = json::parse(o.result_json, ec);
  std::string why = ec || !result.is_object() ? "it is not an object"
                                             : describe_result_files(result.as_object(), plugin_id, channel_id, files);
  if (why.empty()) {
    (*ack.payload)["result"] = std::move(result);
    return;
  }
  spdlog::error("[plugin {}] tool result refused: {}", plugin_id, why);
  ack.error_code = "tool_invoke_failed";
  ack.error_message = "the connector gave a result the host cannot pass on: " + why;
}

// tool_call_id (the invoke's context.tool_call_id, when it had one) tells xAgent which call it is; request_id stays
// off, as a client matching answers by it would take the push for the ack.
std::optional<outgoing_packet> progress_push(std::string_view report, const std::string& tool_id,
                                             const std::string& channel_id, const std::string& tool_call_id) {
  constexpr std::size_t max_message = 200;
  boost::system::error_code ec;
  auto v = json::parse(report, ec);
  if (ec || !v.is_object()) return std::nullopt;
  json::object payload{{"tool_id", tool_id}, {"status", "running"}};
  if (!tool_call_id.empty()) payload["tool_call_id"] = tool_call_id;
  for (const auto& field : v.as_object()) {
    const auto& value = field.value();
    if (field.key() == "message" && value.is_string() && value.as_string().size() <= max_message) {
      payload["message"] = log::redact(value.as_string());
    } else if (field.key() == "progress" && value.is_number()) {
      double x = value.to_number<double>();
      if (!(x >= 0.0 && x <= 1.0)) return std::nullopt;
      payload["progress"] = x;
    } else {
      return std::nullopt;
    }
  }
  outgoing_packet push;
  push.type = "tool.progress.push";
  push.connector_channel_id = channel_id;
  push.payload = std::move(payload);
  return push;
}

}  // namespace xconn

// The sample plugin the manifest, auth-flow and descriptor unit tests parse: plugin "sample-1", card
// im.sample_bot, two IM v2 tools, a skill, a system prompt and chat rules. A test that is about more (auth flows,
// an IM v1 tool) adds it to its copy, so this stays the one definition of the sample.
#pragma once

#include <boost/json.hpp>

#include <string_view>

namespace xconn::test {

inline constexpr std::string_view sample_manifest_json = R"json({
  "id": "sample-1",
  "card": {
    "connector_card_id": "im.sample_bot",
    "connector": {"name": "Sample", "version": "1.2.3", "vendor": "xconn tests"},
    "supports": {
      "user_channel_mode": "multiple",
      "target_types": ["im"],
      "targets": [{"target_type": "im", "provider": "sample", "label": "Sample"}],
      "profiles": ["xagent.im.v2"]
    },
    "tools": [
      {
        "tool_id": "sample_send",
        "profile": "xagent.im.v2",
        "title": "Send",
        "input_schema": {"type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}}
      },
      {
        "tool_id": "sample_status",
        "profile": "xagent.im.v2",
        "title": "Status",
        "input_schema": {"type": "object"}
      }
    ],
    "security": {"trust_level": "local"}
  },
  "tool_options": {"sample_send": {"side_effect": true, "timeout_ms": 2500}},
  "skill": "---\nname: connector-im-sample-bot\ndescription: How to use Sample.\n---\nUse sample_send to talk.\n",
  "system_prompt": "Be brief.",
  "chat": {"title": "Sample room", "roles": {"host": "Host", "viewer": "Viewer"}, "max_length": 300, "max_per_minute": 4},
  "capability": {
    "adapter_id": "sample",
    "adapter_version": "1.2.3",
    "supported_targets": ["sample"],
    "supported_features": ["text", "tools"],
    "health": "ok"
  }
})json";

// The build facts a plugin built by the SDK reports beside its manifest.
inline constexpr std::string_view sample_build_json =
    R"({"version":"0.0.7","git_tag":"v0.0.7","git_rev":"abc1234","build_time":"2607241200"})";

inline boost::json::object sample_manifest() { return boost::json::parse(sample_manifest_json).as_object(); }

}  // namespace xconn::test

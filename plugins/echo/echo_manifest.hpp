// The static declaration of echo (docs/plugin-contract.md, "Identity and declaration"), assembled once at load.
#pragma once

#include "echo_skill.hpp"

#include <boost/json.hpp>

#include <string>
#include <string_view>

namespace echo {

// The host injects connector_channel_id into every input schema, so none is written here. Echo cannot edit a
// sent message and never splits one, so delivery says typing only. Both routes need the API key. Echo declares no
// chat: its peer takes a reply of any length at any pace, so the host limits none and the served skill, like
// SKILL.md, names no reply bound (a test checks that the two agree).
inline constexpr std::string_view manifest_template = R"json({
  "id": "echo",
  "card": {
    "connector_card_id": "im.echo",
    "connector": {
      "name": "Echo",
      "vendor": "xconn",
      "description": "A test target built into xconn: signs in with a token or a QR code, sends and receives messages, reverses text, fails on request and waits on request, with no outside service."
    },
    "supports": {
      "user_channel_mode": "multiple",
      "target_types": ["im"],
      "targets": [{"target_type": "im", "provider": "echo", "label": "Echo"}],
      "profiles": ["xagent.im.v1", "xagent.im.v2"]
    },
    "tools": [
      {
        "tool_id": "echo_send_message",
        "profile": "xagent.im.v2",
        "title": "Send Message",
        "description": "Send a text message to the Echo test peer. A side effect: each call sends once.",
        "related_skill_ids": ["connector-im-echo"],
        "input_schema": {
          "type": "object",
          "required": ["text"],
          "properties": {"text": {"type": "string", "description": "Text to send."}}
        },
        "output_schema": {
          "type": "object",
          "required": ["status", "message_id"],
          "properties": {"status": {"type": "string", "enum": ["sent"]}, "message_id": {"type": "string"}}
        }
      },
      {
        "tool_id": "echo_reverse",
        "profile": "xagent.im.v2",
        "title": "Reverse Text",
        "description": "Return the text with its characters (Unicode code points) in reverse order.",
        "related_skill_ids": ["connector-im-echo"],
        "input_schema": {
          "type": "object",
          "required": ["text"],
          "properties": {"text": {"type": "string", "description": "Text to reverse."}}
        },
        "output_schema": {
          "type": "object",
          "required": ["text"],
          "properties": {"text": {"type": "string"}}
        }
      },
      {
        "tool_id": "echo_fail",
        "profile": "xagent.im.v2",
        "title": "Fail with a Code",
        "description": "Always fail with the given error code, to show how a tool error reaches the agent.",
        "related_skill_ids": ["connector-im-echo"],
        "input_schema": {
          "type": "object",
          "required": ["code"],
          "properties": {
            "code": {"type": "string", "pattern": "^[a-z0-9_.-]{1,64}$", "description": "The error code to fail with."}
          }
        },
        "output_schema": {"type": "object"}
      },
      {
        "tool_id": "echo_sleep",
        "profile": "xagent.im.v2",
        "title": "Wait",
        "description": "Answer after the given number of milliseconds.",
        "related_skill_ids": ["connector-im-echo"],
        "input_schema": {
          "type": "object",
          "required": ["ms"],
          "properties": {
            "ms": {"type": "integer", "minimum": 0, "maximum": 600000, "description": "How long to wait, in milliseconds."}
          }
        },
        "output_schema": {
          "type": "object",
          "required": ["slept_ms"],
          "properties": {"slept_ms": {"type": "integer"}}
        }
      },
      {
        "tool_id": "echo_burst",
        "profile": "xagent.im.v2",
        "title": "Receive a Burst",
        "description": "Make the Echo test peer send count messages at once, numbered '{text} #1' to '{text} #count', for load tests. A side effect: each call sends them once.",
        "related_skill_ids": ["connector-im-echo"],
        "input_schema": {
          "type": "object",
          "required": ["count", "text"],
          "properties": {
            "count": {"type": "integer", "minimum": 1, "maximum": 10000, "description": "How many messages the peer sends."},
            "text": {"type": "string", "description": "Text each message starts with, before its number."}
          }
        },
        "output_schema": {
          "type": "object",
          "required": ["status", "count"],
          "properties": {"status": {"type": "string", "enum": ["sent"]}, "count": {"type": "integer"}}
        }
      }
    ],
    "auth_flows": [
      {
        "id": "echo_token",
        "target_type": "im",
        "type": "form",
        "title": "Sign in with a token",
        "description": "Any non-empty token signs in, except the word invalid, which is refused.",
        "fields": [
          {"name": "token", "label": "Token", "input_type": "password", "secret": true, "required": true}
        ]
      },
      {
        "id": "echo_qr_login",
        "target_type": "im",
        "type": "qr_login",
        "title": "Sign in with a QR code",
        "description": "Shows a QR code that counts as scanned on the first poll and signed in on the second."
      }
    ],
    "security": {"trust_level": "builtin", "data_classes": ["message"]}
  },
  "tool_options": {"echo_send_message": {"side_effect": true}, "echo_burst": {"side_effect": true},
                   "echo_reverse": {"non_blocking": true}, "echo_fail": {"non_blocking": true}},
  "system_prompt": "This conversation runs on Echo, a test target inside the connector server: nothing reaches a person. Use the echo tools only to test or demonstrate tool calls. Pass connector_channel_id unchanged. echo_send_message sends once per call: do not repeat it to retry. echo_fail fails by design: report its error code instead of retrying. echo_burst is for load tests: call it only when asked to.",
  "capability": {
    "adapter_id": "echo",
    "supported_targets": ["echo"],
    "supported_features": ["text", "tools", "messages"]
  },
  "delivery": {"typing": true},
  "http_routes": [{"path": "/inject", "method": "POST"}, {"path": "/sent", "method": "GET"}]
})json";

// The versions come from the stamped build version, so card, capability and build facts never disagree.
inline std::string manifest_json(std::string_view version) {
  boost::json::object manifest = boost::json::parse(manifest_template).as_object();
  manifest["card"].as_object()["connector"].as_object()["version"] = version;
  manifest["capability"].as_object()["adapter_version"] = version;
  manifest["skill"] = skill_md;
  return boost::json::serialize(manifest);
}

}  // namespace echo

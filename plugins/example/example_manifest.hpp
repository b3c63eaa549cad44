// The example plugin's manifest (docs/plugin-api.md "Writing a network adapter"): card im.example, the chat_login
// form (server, user, and the password, a secret the host keeps sealed and hands back at restore), no tools, its
// skill, and delivery flags: one line per message, no edits, no typing.
#pragma once

#include "kit/manifest.hpp"

#include <string>
#include <string_view>

namespace example {

inline constexpr std::string_view skill_md = R"md(---
name: connector-im-example
description: Answer people in a room of a line-based chat server.
---
You are talking with people in a chat room that shows plain text, one line per message.

- Write plain text, on one line; line breaks become spaces.
- Keep replies short.
)md";

inline constexpr std::string_view manifest_template = R"json({
  "id": "example",
  "card": {
    "connector_card_id": "im.example",
    "connector": {"name": "Example chat", "version": "", "vendor": "xconn"},
    "supports": {"user_channel_mode": "multiple", "target_types": ["im"],
                 "targets": [{"target_type": "im", "provider": "example", "label": "Example chat"}],
                 "profiles": ["xagent.im.v2"]},
    "tools": [],
    "auth_flows": [
      {
        "id": "chat_login",
        "target_type": "im",
        "type": "form",
        "title": "Sign in to a chat server",
        "description": "The chat server (host:port), your user name there and its password.",
        "fields": [
          {"name": "server", "label": "Server (host:port)", "input_type": "text", "required": true},
          {"name": "user", "label": "User", "input_type": "text", "required": true},
          {"name": "password", "label": "Password", "input_type": "password", "secret": true, "required": true}
        ]
      }
    ],
    "security": {"trust_level": "builtin", "data_classes": ["message"]}
  },
  "system_prompt": "This conversation runs in a plain-text chat room. Write one short line.",
  "chat": {"title": "Example chat", "max_length": 2000, "max_per_minute": 0},
  "delivery": {"can_edit": false, "typing": false, "can_split": false},
  "capability": {
    "adapter_id": "example",
    "supported_targets": ["example"],
    "supported_features": ["text", "messages"]
  }
})json";

inline std::string manifest_json(std::string_view version) {
  return xconn::kit::stamped_manifest(manifest_template, skill_md, version);
}

}  // namespace example

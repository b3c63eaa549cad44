// The irc plugin's manifest (docs/adapters.md "irc"): card im.irc, the irc_login form, two tools, its skill, and
// delivery flags: IRC splits (can_split) and cannot edit or show typing.
//
// chat states IRC's real limits: each message (one PRIVMSG body) is at most irc_text's max_body_bytes, counted in
// bytes as the splitter counts them, and max_per_minute 0 leaves the pace to the plugin's own lines_per_second, so
// the host never refuses a reply as rate_limited. The skill's own text names the same byte bound (a test checks).
#pragma once

#include "irc_text.hpp"
#include "kit/manifest.hpp"

#include <string>
#include <string_view>

namespace irc {

inline constexpr std::string_view skill_md = R"md(---
name: connector-im-irc
description: Answer people in an IRC channel or a private IRC conversation.
---
You are talking with people on IRC, in a channel or in a private conversation.

- Write plain text. IRC shows no Markdown; each line of your reply becomes one IRC message.
- Keep replies short: a few lines. A longer line is split into messages of at most 400 bytes, and lines go out
  at a limited rate (two a second by default), so a long reply takes a while to appear.
- IRC cannot edit or delete a message: send each reply once, complete.
- Files cannot be sent on IRC; a file you attach is announced as a link.
- irc_channel_names lists who is in the channel; irc_message_send sends a message at once (do not repeat a call to
  retry it).
- Pass connector_channel_id unchanged to every tool.
)md";

inline constexpr std::string_view manifest_template = R"json({
  "id": "irc",
  "card": {
    "connector_card_id": "im.irc",
    "connector": {"name": "IRC", "version": "", "vendor": "xconn"},
    "supports": {"user_channel_mode": "multiple", "target_types": ["im"],
                 "targets": [{"target_type": "im", "provider": "irc", "label": "IRC"}],
                 "profiles": ["xagent.im.v2"]},
    "tools": [
      {
        "tool_id": "irc_message_send",
        "profile": "xagent.im.v2",
        "title": "Send an IRC Message",
        "description": "Send a message to the bound IRC channel or nick; each line of the text is one IRC line. A side effect: each call sends once.",
        "related_skill_ids": ["connector-im-irc"],
        "input_schema": {"type": "object", "required": ["text"],
                         "properties": {"text": {"type": "string", "minLength": 1}}},
        "output_schema": {"type": "object", "required": ["status", "lines"],
                          "properties": {"status": {"type": "string", "enum": ["sent"]},
                                         "lines": {"type": "integer"}}}
      },
      {
        "tool_id": "irc_channel_names",
        "profile": "xagent.im.v2",
        "title": "List the People in the IRC Channel",
        "description": "The nicks in the bound IRC channel, as the server's NAMES answer gives them.",
        "related_skill_ids": ["connector-im-irc"],
        "input_schema": {"type": "object", "properties": {}},
        "output_schema": {"type": "object", "required": ["names"],
                          "properties": {"names": {"type": "array", "items": {"type": "string"}}}}
      }
    ],
    "auth_flows": [
      {
        "id": "irc_login",
        "target_type": "im",
        "type": "form",
        "title": "Join an IRC channel or talk with a nick",
        "description": "The IRC server (host:port), the nick to use there, and the channel (#ops) or nick to talk with.",
        "fields": [
          {"name": "server", "label": "Server (host:port)", "input_type": "text", "required": true},
          {"name": "nick", "label": "Nick", "input_type": "text", "required": true},
          {"name": "target", "label": "Channel or nick", "input_type": "text", "required": true},
          {"name": "password", "label": "Server password", "input_type": "password", "secret": true, "required": false},
          {"name": "tls", "label": "TLS (true or false)", "input_type": "text", "required": false}
        ]
      }
    ],
    "security": {"trust_level": "builtin", "data_classes": ["message"]}
  },
  "tool_options": {"irc_message_send": {"side_effect": true}},
  "system_prompt": "This conversation runs on IRC. Write short plain-text lines. Pass connector_channel_id unchanged.",
  "chat": {"title": "IRC", "length_unit": "bytes", "max_per_minute": 0},
  "delivery": {"can_edit": false, "typing": false, "can_split": true},
  "capability": {
    "adapter_id": "irc",
    "supported_targets": ["irc"],
    "supported_features": ["text", "tools", "messages"]
  }
})json";

// chat.max_length is the splitter's own bound, so the two cannot drift apart.
inline std::string manifest_json(std::string_view version) {
  auto manifest = boost::json::parse(xconn::kit::stamped_manifest(manifest_template, skill_md, version)).as_object();
  manifest["chat"].as_object()["max_length"] = max_body_bytes;
  return boost::json::serialize(manifest);
}

}  // namespace irc

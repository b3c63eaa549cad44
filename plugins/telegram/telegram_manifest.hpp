// The telegram plugin's manifest: the official Telegram connector's card surface (flow, fields and tool ids) on
// Protocol 3.0 (docs/adapters.md "telegram"), its skill, its chat and delivery flags.
//
// One length, Telegram's own: 4,096 UTF-16 code units a message (an emoji outside the BMP counts as two). The
// manifest declares it (chat.max_length 4096 in chat.length_unit utf16_units), so the host's sentence in the served
// skill, the skill's own line, the tool's description, schema and refusal, and the split of a long final
// (delivery.can_split: the host hands it over whole) all say and keep that one number (telegram_text.hpp
// max_message_units). Before, a host that counted only characters (at most 4000) made the plugin tell 4,000.
#pragma once

#include "kit/manifest.hpp"

#include <string>
#include <string_view>

namespace telegram {

inline constexpr std::string_view skill_md = R"md(---
name: connector-im-telegram
description: Answer people in a Telegram chat through a bot.
---
You are talking with people in a Telegram chat, through a bot.

- Write plain text. Telegram shows your words as they are: no Markdown or HTML formatting is applied.
- Keep replies short, like chat messages, and under 4,096 UTF-16 code units (most emoji count as two); a longer reply is split into several messages.
- To send an image, a video or a document, pass its file_ref to telegram_message_send_media.
- telegram_message_send sends one message at once; do not repeat a call to retry it.
- A sticker, a location, a poll or a contact arrives as a short description in brackets, such as "[location 48.85, 2.35]"; someone joining or leaving arrives as context.
- Pass connector_channel_id unchanged to every tool.
)md";

inline constexpr std::string_view manifest_template = R"json({
  "id": "telegram",
  "card": {
    "connector_card_id": "im.telegram",
    "connector": {"name": "Telegram", "version": "", "vendor": "xconn"},
    "supports": {"user_channel_mode": "multiple", "target_types": ["im"],
                 "targets": [{"target_type": "im", "provider": "telegram", "label": "Telegram"}],
                 "profiles": ["xagent.im.v2"]},
    "tools": [
      {
        "tool_id": "telegram_message_send",
        "profile": "xagent.im.v2",
        "title": "Send a Telegram Message",
        "description": "Send a text message of at most 4,096 UTF-16 code units (most emoji count as two) to the bound Telegram chat. A side effect: each call sends once.",
        "related_skill_ids": ["connector-im-telegram"],
        "input_schema": {"type": "object", "required": ["text"],
                         "properties": {"text": {"type": "string", "minLength": 1, "maxLength": 4096}}},
        "output_schema": {"type": "object", "required": ["status", "message_id"],
                          "properties": {"status": {"type": "string", "enum": ["sent"]},
                                         "message_id": {"type": "integer"}}}
      },
      {
        "tool_id": "telegram_message_send_media",
        "profile": "xagent.im.v2",
        "title": "Send a File to Telegram",
        "description": "Send an uploaded file (file_ref) to the bound chat as a photo, a video or a document, with an optional caption.",
        "related_skill_ids": ["connector-im-telegram"],
        "input_schema": {"type": "object", "required": ["file_ref"],
                         "properties": {"file_ref": {"type": "string"}, "text": {"type": "string"},
                                        "caption": {"type": "string"}}},
        "output_schema": {"type": "object", "required": ["status", "message_id", "file_ref", "media_type"],
                          "properties": {"status": {"type": "string", "enum": ["sent"]},
                                         "message_id": {"type": "integer"}, "file_ref": {"type": "string"},
                                         "media_type": {"type": "string", "enum": ["image", "video", "file"]}}}
      }
    ],
    "auth_flows": [
      {
        "id": "telegram_bot_binding",
        "target_type": "im",
        "type": "form",
        "title": "Bind a Telegram bot to a chat",
        "description": "The bot token from @BotFather and the id of the chat (a group, a channel or a person) the bot talks in.",
        "fields": [
          {"name": "bot_token", "label": "Bot token", "input_type": "password", "secret": true, "required": true,
           "placeholder": "123456789:AAH...",
           "help_text": "Ask @BotFather in Telegram for a new bot (/newbot) and paste the token it answers with."},
          {"name": "chat_id", "label": "Chat id", "input_type": "text", "required": true,
           "placeholder": "-1001234567890 or @channelname",
           "help_text": "Add the bot to the group or channel (or write to it first), then give that chat's numeric id or public @name."}
        ]
      }
    ],
    "ui": {
      "login_flow": {
        "flow_id": "telegram_bot_binding",
        "steps": [{"type": "form", "request_type": "auth.start", "response_type": "auth.start.ack"}]
      }
    },
    "security": {"trust_level": "builtin", "data_classes": ["message", "file"]}
  },
  "tool_options": {"telegram_message_send": {"side_effect": true}, "telegram_message_send_media": {"side_effect": true}},
  "system_prompt": "This conversation runs in a Telegram chat through a bot. Write plain text. Pass connector_channel_id unchanged.",
  "chat": {"title": "Telegram chat", "max_length": 4096, "length_unit": "utf16_units", "max_per_minute": 30},
  "delivery": {"can_edit": true, "typing": true, "can_split": true},
  "capability": {
    "adapter_id": "telegram",
    "supported_targets": ["telegram"],
    "supported_features": ["text", "files", "tools", "messages", "edit", "typing"]
  }
})json";

inline std::string manifest_json(std::string_view version) {
  return xconn::kit::stamped_manifest(manifest_template, skill_md, version);
}

}  // namespace telegram

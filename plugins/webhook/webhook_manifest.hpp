// The webhook plugin's manifest (docs/adapters.md "webhook"): card im.webhook, the webhook_binding form flow, the
// webhook_post tool, its skill, and the one public route a sender POSTs to.
#pragma once

#include "kit/manifest.hpp"

#include <string>
#include <string_view>

namespace webhook {

inline constexpr std::string_view skill_md = R"md(---
name: connector-im-webhook
description: Answer a system that talks to you through HTTP webhooks.
---
You are talking with another system (or the people behind it) through a webhook: it POSTs messages to you and
receives your replies as signed HTTP POSTs.

- Write plain text; the receiver gets exactly the text you write, as one JSON field.
- Your final reply is delivered on its own: do not call webhook_post to repeat it.
- webhook_post sends one extra message to the receiver at once (a notice, a status line); do not repeat a call to
  retry it.
- Pass connector_channel_id unchanged to every tool.
)md";

inline constexpr std::string_view manifest_template = R"json({
  "id": "webhook",
  "card": {
    "connector_card_id": "im.webhook",
    "connector": {"name": "Webhook", "version": "", "vendor": "xconn",
                  "description": "Any system that can send and receive an HTTP POST becomes a conversation: signed JSON in, signed JSON out."},
    "supports": {"user_channel_mode": "multiple", "target_types": ["im"],
                 "targets": [{"target_type": "im", "provider": "webhook", "label": "Webhook"}],
                 "profiles": ["xagent.im.v2"]},
    "tools": [
      {
        "tool_id": "webhook_post",
        "profile": "xagent.im.v2",
        "title": "Post to the Webhook",
        "description": "POST a text message to the bound receiver (outbound_url), signed. A side effect: each call posts once.",
        "related_skill_ids": ["connector-im-webhook"],
        "input_schema": {"type": "object", "required": ["text"],
                         "properties": {"text": {"type": "string", "minLength": 1}}},
        "output_schema": {"type": "object", "required": ["status", "http_status"],
                          "properties": {"status": {"type": "string", "enum": ["sent"]},
                                         "http_status": {"type": "integer"}}}
      }
    ],
    "auth_flows": [
      {
        "id": "webhook_binding",
        "target_type": "im",
        "type": "form",
        "title": "Bind a webhook",
        "description": "Where replies are POSTed (http:// or https://) and the shared secret (at least 16 bytes) that signs both directions with HMAC-SHA256.",
        "fields": [
          {"name": "outbound_url", "label": "Outbound URL", "input_type": "text", "required": true},
          {"name": "secret", "label": "Shared secret", "input_type": "password", "secret": true, "required": true}
        ]
      }
    ],
    "security": {"trust_level": "builtin", "data_classes": ["message", "file"]}
  },
  "tool_options": {"webhook_post": {"side_effect": true}},
  "system_prompt": "This conversation runs over an HTTP webhook: your replies are POSTed to the receiver as JSON. Write plain text. Pass connector_channel_id unchanged.",
  "chat": {"title": "Webhook conversation", "max_length": 4000, "max_per_minute": 30},
  "delivery": {"can_split": true},
  "http_routes": [{"path": "/in/{id}", "method": "POST", "public": true}],
  "capability": {
    "adapter_id": "webhook",
    "supported_targets": ["webhook"],
    "supported_features": ["text", "files", "tools", "messages"]
  }
})json";

inline std::string manifest_json(std::string_view version) {
  return xconn::kit::stamped_manifest(manifest_template, skill_md, version);
}

}  // namespace webhook

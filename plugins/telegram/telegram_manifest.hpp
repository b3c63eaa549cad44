// The telegram plugin's manifest: the official Telegram connector's card surface (flow, fields and tool ids) on
// Protocol 3.0 (docs/adapters.md "telegram"), its skill, its chat and delivery flags.
//
// One length, Telegram's own: 4,096 UTF-16 code units a message (an emoji outside the BMP counts as two). The
// manifest declares it (chat.max_length, chat.length_unit utf16_units); the skill, the tool's schema and refusal, and
// the split of a long final (telegram_text.hpp max_message_units) all keep that one number.
#pragma once

#include "telegram_documents.hpp"
#include "kit/manifest.hpp"

#include <string>
#include <string_view>

namespace telegram {

inline std::string manifest_json(std::string_view version) {
  return xconn::kit::stamped_manifest(documents::manifest_json, documents::skill_md, version);
}

}  // namespace telegram

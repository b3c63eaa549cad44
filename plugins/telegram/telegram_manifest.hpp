// The telegram plugin's manifest: the official Telegram connector's card surface (flow, fields and tool ids) on
// Protocol 3.0 (docs/adapters.md "telegram"), its skill, its chat and delivery flags.
//
// One length, Telegram's own: 4,096 UTF-16 code units a message (an emoji outside the BMP counts as two). The
// manifest declares it (chat.max_length 4096 in chat.length_unit utf16_units), so the host's sentence in the served
// skill, the skill's own line, the tool's description, schema and refusal, and the split of a long final
// (delivery.can_split: the host hands it over whole) all say and keep that one number (telegram_text.hpp
// max_message_units). Before, a host that counted only characters (at most 4000) made the plugin tell 4,000.
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

// The example plugin's manifest (docs/plugin-api.md "Writing a network adapter"): card im.example, the chat_login
// form (server, user, and the password, a secret the host keeps sealed and hands back at restore), no tools, its
// skill, and delivery flags: one line per message, no edits, no typing.
#pragma once

#include "example_documents.hpp"
#include "kit/manifest.hpp"

#include <string>
#include <string_view>

namespace example {

inline std::string manifest_json(std::string_view version) {
  return xconn::kit::stamped_manifest(documents::manifest_json, documents::skill_md, version);
}

}  // namespace example

// The irc plugin's manifest (docs/adapters.md "irc"): card im.irc, the irc_login form, two tools, its skill, and
// delivery flags: IRC splits (can_split) and cannot edit or show typing.
//
// chat states IRC's real limits: each message (one PRIVMSG body) is at most irc_text's max_body_bytes, counted in
// bytes as the splitter counts them, and max_per_minute 0 leaves the pace to the plugin's own lines_per_second, so
// the host never refuses a reply as rate_limited. The skill's own text names the same byte bound (a test checks).
#pragma once

#include "irc_documents.hpp"
#include "irc_text.hpp"
#include "kit/manifest.hpp"

#include <string>
#include <string_view>

namespace irc {

// chat.max_length is the splitter's own bound, so the two cannot drift apart.
inline std::string manifest_json(std::string_view version) {
  auto manifest = boost::json::parse(xconn::kit::stamped_manifest(documents::manifest_json, documents::skill_md, version)).as_object();
  manifest["chat"].as_object()["max_length"] = max_body_bytes;
  return boost::json::serialize(manifest);
}

}  // namespace irc

// The wechat plugin's manifest: the official WeChat connector's card surface (card id, flow id, tool ids) on
// Protocol 3.0 (docs/wechat.md), its skill, its chat and delivery flags.
#pragma once

#include "wechat_documents.hpp"
#include "kit/manifest.hpp"

#include <string>
#include <string_view>

namespace wechat {

inline std::string manifest_json(std::string_view version) {
  return xconn::kit::stamped_manifest(documents::manifest_json, documents::skill_md, version);
}

}  // namespace wechat

// The webhook plugin's manifest (docs/adapters.md "webhook"): card im.webhook, the webhook_binding form flow, the
// webhook_post tool, its skill, and the one public route a sender POSTs to.
#pragma once

#include "webhook_documents.hpp"
#include "kit/manifest.hpp"

#include <string>
#include <string_view>

namespace webhook {

inline std::string manifest_json(std::string_view version) {
  return xconn::kit::stamped_manifest(documents::manifest_json, documents::skill_md, version);
}

}  // namespace webhook

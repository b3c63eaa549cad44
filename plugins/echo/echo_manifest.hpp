// The static declaration of echo (docs/plugin-contract.md, "Identity and declaration"), assembled once at load.
#pragma once

#include "echo_documents.hpp"

#include <boost/json.hpp>

#include <string>
#include <string_view>

namespace echo {

// manifest.json: the host injects connector_channel_id into every input schema, so none is written there. Echo
// cannot edit a sent message and never splits one, so delivery says typing only. Both routes need the API key. Echo
// declares no chat: its peer takes a reply of any length at any pace, so the host limits none and the served skill,
// like SKILL.md, names no reply bound (a test checks that the two agree).
//
// The versions come from the stamped build version, so card, capability and build facts never disagree.
inline std::string manifest_json(std::string_view version) {
  boost::json::object manifest = boost::json::parse(documents::manifest_json).as_object();
  manifest["card"].as_object()["connector"].as_object()["version"] = version;
  manifest["capability"].as_object()["adapter_version"] = version;
  manifest["skill"] = documents::skill_md;
  return boost::json::serialize(manifest);
}

}  // namespace echo

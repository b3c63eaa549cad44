// A plugin's manifest from its JSON template: the build's version stamped into the card and the capability, and
// the skill's Markdown added, so card, capability and build facts never disagree.
#pragma once

#include <boost/json.hpp>

#include <string>
#include <string_view>

namespace xconn::kit {

inline std::string stamped_manifest(std::string_view manifest_template, std::string_view skill_md,
                                    std::string_view version) {
  auto manifest = boost::json::parse(manifest_template).as_object();
  manifest["card"].as_object()["connector"].as_object()["version"] = version;
  manifest["capability"].as_object()["adapter_version"] = version;
  manifest["skill"] = skill_md;
  return boost::json::serialize(manifest);
}

}  // namespace xconn::kit

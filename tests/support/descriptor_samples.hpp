// What the descriptor tests build descriptors from: the shared sample plugin offering both IM profiles, with a
// third tool of profile xagent.im.v1 (so that negotiation can leave one out), and a channel of it.
#pragma once

#include "core/channels/descriptor.hpp"
#include "support/sample_manifest.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <string>
#include <vector>

namespace xconn::test {

inline boost::json::object sample_with_im_v1() {
  auto m = sample_manifest();
  auto& card = m["card"].as_object();
  card["supports"].as_object()["profiles"] = boost::json::array{"xagent.im.v1", "xagent.im.v2"};
  card["tools"].as_array().push_back(boost::json::object{{"tool_id", "sample_legacy"},
                                                         {"profile", "xagent.im.v1"},
                                                         {"title", "Legacy"},
                                                         {"input_schema", {{"type", "object"}}}});
  return m;
}

inline plugin_manifest manifest_from(const boost::json::object& m) {
  auto r = parse_manifest(boost::json::serialize(m), sample_build_json);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error());
  return r ? *r : plugin_manifest{};
}

inline const plugin_manifest& sample() {
  static const plugin_manifest m = manifest_from(sample_with_im_v1());
  return m;
}

inline channel make_channel(bool authenticated, boost::json::object binding = {}) {
  channel c;
  c.id = "cch_0123456789abcdefABCDEF";
  c.plugin_id = "sample-1";
  c.owner = "conn_owner0123456789abcdef";
  c.authenticated = authenticated;
  c.persistent = authenticated;
  c.binding = std::move(binding);
  return c;
}

inline const std::vector<std::string> both_profiles{"xagent.im.v1", "xagent.im.v2"};
inline const std::vector<std::string> v2_only{"xagent.im.v2"};

}  // namespace xconn::test

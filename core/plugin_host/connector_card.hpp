// The Connector Card (spec §4.1, schema xagent.connector/v1) built from a plugin's declared card facts.
#pragma once

#include <boost/json/object.hpp>
#include <boost/system/result.hpp>

#include <string>

namespace xconn {

inline constexpr std::string_view protocol_version = "3.0";
inline constexpr std::string_view card_schema = "xagent.connector/v1";

// Adds `schema`, `protocol_version`, `build` and `security.api_key_required` (true), injects the required
// `connector_channel_id` string property into every tool's input schema, and applies the spec's hard
// validation. The error names the field ("tools[1].tool_id: ...").
boost::system::result<boost::json::object, std::string> build_card(const boost::json::object& declared,
                                                                   const boost::json::object& build);

}  // namespace xconn

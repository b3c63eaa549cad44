// The served SKILL.md (spec §4.2): the plugin's own text, then the rules and the room every conversation keeps.
// Its sentence on reply limits is made from the same chat and delivery the host enforces, in the plugin's unit, so
// the skill names the bound a reply is split or refused at, and no other.
#pragma once

#include "core/plugin_host/plugin_manifest.hpp"

#include <boost/system/result.hpp>

#include <string>

namespace xconn {

// What chat and delivery make of a reply's length and pace: "Replies are at most 500 characters, at most 6 per
// minute." A plugin that splits (can_split) states the bound of each message; one with max_per_minute 0, its own pace.
std::string reply_limits_sentence(const chat_limits& chat, bool can_split);

// The served SKILL.md for m (card id, system prompt, chat and delivery already read) from the plugin's own text;
// empty when m has none of text, prompt and chat. The error names the field at fault.
boost::system::result<std::string, std::string> compose_skill(const plugin_manifest& m, std::string plugin_text);

}  // namespace xconn

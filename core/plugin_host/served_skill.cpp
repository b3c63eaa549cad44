#include "core/plugin_host/served_skill.hpp"

#include <regex>

namespace xconn {

std::string reply_limits_sentence(const chat_limits& chat, bool can_split) {
  std::string bound = std::to_string(chat.max_length) + " " + std::string(spoken(chat.unit));
  std::string s = can_split ? "A reply goes out in messages of at most " + bound + " each"
                            : "Replies are at most " + bound;
  if (chat.max_per_minute > 0)
    s += ", at most " + std::to_string(chat.max_per_minute) + (can_split ? " replies per minute." : " per minute.");
  else
    s += "; the connector paces how fast they go out, with no cap per minute.";
  return s;
}

boost::system::result<std::string, std::string> compose_skill(const plugin_manifest& m, std::string skill) {
  using result = boost::system::result<std::string, std::string>;
  if (skill.empty() && m.system_prompt.empty() && !m.chat) return result(boost::system::in_place_value);
  std::string name = skill_name_for(m.card_id);
  if (skill.empty()) {
    skill = "---\nname: " + name + "\ndescription: How to handle " + m.card_id + " conversations.\n---\n";
  } else {
    static const std::regex header("^---\\r?\\n(?:(?!---)[^\\n]*\\n)*?name:[ \\t]*([^\\r\\n]+)\\r?\\n");
    std::smatch match;
    if (!std::regex_search(skill, match, header))
      return result(boost::system::in_place_error, "skill: needs a front matter header with name");
    std::string declared = match[1];
    while (!declared.empty() && (declared.back() == ' ' || declared.back() == '\t')) declared.pop_back();
    if (declared != name) return result(boost::system::in_place_error, "skill: header name must be " + name);
  }
  if (!m.system_prompt.empty()) skill += "\n## Rules for every conversation\n\n" + m.system_prompt + "\n";
  if (m.chat) {
    skill += "\n## The room\n\n" + m.chat->title + "\n";
    for (const auto& [id, label] : m.chat->roles) skill += "\n- `" + id + "`: " + label;
    if (!m.chat->roles.empty()) skill += "\n";
    skill += "\n" + reply_limits_sentence(*m.chat, m.delivery.can_split) + "\n";
  }
  return result(boost::system::in_place_value, std::move(skill));
}

}  // namespace xconn

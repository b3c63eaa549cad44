// What a message with no text, caption or file becomes: a short description in brackets ("[sticker 😀]",
// "[location 48.85, 2.35]", "[poll: question (a / b)]", "[contact: name]", "[joined: Ann]"), so that nothing a
// chat shows vanishes on its way to the agent. Before, such messages were skipped without a trace. The plugin
// API's emit has no member for structured data (the host refuses unknown fields), so the facts ride in the text.
#pragma once

#include "telegram_json.hpp"
#include "telegram_text.hpp"

#include <boost/json.hpp>

#include <array>
#include <cstdio>
#include <string>
#include <string_view>

namespace telegram {

// A described message and whether it asks for an answer: a chat's own events (someone joined, a title changed, a
// message pinned) are context for the next message, never a turn of their own (trigger false).
struct described {
  std::string text;
  bool trigger = true;
};

namespace detail {

inline std::string coordinate(const boost::json::value* v) {
  if (!v || !v->is_number()) return "?";
  char out[32];
  std::snprintf(out, sizeof out, "%.6f", v->to_number<double>());
  std::string s(out);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

inline std::string person(const boost::json::value* v) {
  if (!v || !v->is_object()) return "";
  const auto& o = v->as_object();
  return display_name(string_at(o, "first_name"), string_at(o, "last_name"), string_at(o, "username"));
}

inline std::string joined_names(const boost::json::value* v) {
  std::string out;
  if (v && v->is_array())
    for (const auto& p : v->as_array()) {
      auto name = person(&p);
      if (name.empty()) continue;
      out += (out.empty() ? "" : ", ") + name;
    }
  return out;
}

inline std::string titled(std::string_view what, const std::string& title) {
  return "[" + std::string(what) + (title.empty() ? "" : ": " + title) + "]";
}

// Members every message may carry, none of them content of its own.
inline bool envelope_member(std::string_view key) {
  static constexpr std::array<std::string_view, 30> keys{
      "message_id", "message_thread_id", "from", "sender_chat", "sender_boost_count", "sender_business_bot", "date",
      "business_connection_id", "chat", "forward_origin", "is_topic_message", "is_automatic_forward",
      "reply_to_message", "external_reply", "quote", "reply_to_story", "via_bot", "edit_date",
      "has_protected_content", "is_from_offline", "media_group_id", "author_signature", "entities",
      "link_preview_options", "effect_id", "caption_entities", "show_caption_above_media", "has_media_spoiler",
      "reply_markup", "text"};
  for (auto k : keys)
    if (k == key) return true;
  return key == "caption";
}

}  // namespace detail

// The description of a message that has no text, caption or file this plugin forwards. Always something: a kind
// this build does not know is named by its member ("[giveaway winners]"), an empty message says so.
inline described describe_message(const boost::json::object& m) {
  using detail::coordinate;
  auto member = [&](const char* key) { return m.if_contains(key); };
  auto object_at = [&](const char* key) -> const boost::json::object* {
    auto* v = member(key);
    return v && v->is_object() ? &v->as_object() : nullptr;
  };
  if (auto* s = object_at("sticker")) {
    auto emoji = string_at(*s, "emoji");
    return {emoji.empty() ? "[sticker]" : "[sticker " + emoji + "]"};
  }
  if (auto* v = object_at("venue")) {
    auto title = string_at(*v, "title"), address = string_at(*v, "address");
    return {detail::titled("venue", title + (title.empty() || address.empty() ? "" : ", ") + address)};
  }
  if (auto* l = object_at("location"))
    return {"[location " + coordinate(l->if_contains("latitude")) + ", " + coordinate(l->if_contains("longitude")) + "]"};
  if (auto* p = object_at("poll")) {
    std::string options;
    if (auto* list = p->if_contains("options"); list && list->is_array())
      for (const auto& o : list->as_array())
        if (o.is_object()) options += (options.empty() ? "" : " / ") + string_at(o.as_object(), "text");
    return {"[poll: " + string_at(*p, "question") + (options.empty() ? "" : " (" + options + ")") + "]"};
  }
  if (auto* c = object_at("contact")) {
    return {detail::titled("contact", display_name(string_at(*c, "first_name"), string_at(*c, "last_name"), ""))};
  }
  if (auto* d = object_at("dice")) {
    auto* value = d->if_contains("value");
    return {"[dice " + string_at(*d, "emoji") + (value && value->is_int64() ? " " + std::to_string(value->as_int64()) : "") +
            "]"};
  }
  if (auto* g = object_at("game")) return {detail::titled("game", string_at(*g, "title"))};
  if (auto* i = object_at("invoice")) return {detail::titled("invoice", string_at(*i, "title"))};
  if (member("story")) return {"[story]"};
  // The chat's own events.
  if (member("new_chat_members")) return {detail::titled("joined", detail::joined_names(member("new_chat_members"))), false};
  if (member("left_chat_member")) return {detail::titled("left", detail::person(member("left_chat_member"))), false};
  if (auto* t = member("new_chat_title"); t && t->is_string())
    return {detail::titled("chat title", std::string(t->as_string())), false};
  if (member("new_chat_photo")) return {"[new chat photo]", false};
  if (member("delete_chat_photo")) return {"[chat photo removed]", false};
  if (member("group_chat_created") || member("supergroup_chat_created") || member("channel_chat_created"))
    return {"[chat created]", false};
  if (member("migrate_to_chat_id") || member("migrate_from_chat_id")) return {"[chat moved to a supergroup]", false};
  if (member("pinned_message")) return {"[pinned a message]", false};
  for (const auto& kv : m) {
    if (detail::envelope_member(kv.key())) continue;
    std::string kind(kv.key().substr(0, 64));
    for (auto& c : kind)
      if (c == '_') c = ' ';
    return {"[" + kind + "]", false};
  }
  return {"[an empty message]", false};
}

}  // namespace telegram

// The host's messages as PRIVMSGs and back (docs/adapters.md "irc").
//
// A PRIVMSG as the host's inbound message: its text (a CTCP ACTION as "* nick text"), the
// sender's IRCv3 account or else its nick, the IRCv3 msgid (left out past the host's 256 bytes, which would cost the
// whole line) and server-time, and the conversation it belongs to: the channel, or the sender of a private message.
// Every field is valid UTF-8 within the host's bounds. Pure: the plugin routes it to the channels bound so.
//
// A final (or a tool's text) as PRIVMSG bodies: its text split to the server's bound, then each file announced by
// name with its link, since IRC carries no files.
#pragma once

#include "irc_line.hpp"
#include "irc_replies.hpp"
#include "irc_text.hpp"
#include "kit/json_fields.hpp"
#include "kit/unix_time.hpp"
#include "kit/utf8_bound.hpp"

#include <boost/json.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace irc {

struct privmsg {
  std::string json;         // the emit's message
  std::string from;         // folded: the channel it was said in, or the nick it came from
  bool to_channel = false;  // said in a channel (else to our nick)
};

inline std::optional<privmsg> read_privmsg(const line& l) {
  if (l.command != "PRIVMSG" || l.params.size() < 2) return std::nullopt;
  auto nick = to_valid_utf8(l.nick(), true);
  auto text = message_text(l.params[1], nick);
  if (!text || nick.empty()) return std::nullopt;
  bool to_channel = is_channel(l.params[0]);
  boost::json::object message{{"text", to_valid_utf8(*text)}, {"sender_name", xconn::kit::emit_display_field(nick)}};
  auto account = l.tags.find("account");
  message["sender_id"] = account != l.tags.end() && !account->second.empty() ? to_valid_utf8(account->second, true) : nick;
  if (auto id = l.tags.find("msgid"); id != l.tags.end() && !id->second.empty()) {
    auto msg_id = to_valid_utf8(id->second, true);
    if (msg_id.size() <= xconn::kit::emit_field_max_bytes) message["msg_id"] = std::move(msg_id);
  }
  auto time = l.tags.find("time");
  long long at = time == l.tags.end() ? 0 : server_time_ms(time->second);
  if (at <= 0) at = xconn::kit::unix_ms();
  message["at"] = at;
  message["channel_key"] = to_valid_utf8(to_channel ? "irc/group/" + l.params[0] : "irc/direct/" + nick, true);
  return privmsg{boost::json::serialize(message), fold(to_channel ? l.params[0] : nick), to_channel};
}

inline std::vector<std::string> reply_bodies(const boost::json::object& reply) {
  using xconn::kit::string_at;
  auto bodies = split_message(string_at(reply, "text"));
  if (auto* files = reply.if_contains("files"); files && files->is_array())
    for (const auto& f : files->as_array())
      if (f.is_object() && !string_at(f.as_object(), "download_url").empty())
        for (auto& part :
             split_message(string_at(f.as_object(), "filename") + " " + string_at(f.as_object(), "download_url")))
          bodies.push_back(std::move(part));
  return bodies;
}

}  // namespace irc

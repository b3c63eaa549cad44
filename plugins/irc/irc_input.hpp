// The irc_login form as the plugin reads it (docs/adapters.md "irc"): every field checked, a refusal naming the field
// and never its value.
#pragma once

#include "irc_line.hpp"

#include <boost/json.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace irc {

struct login {
  std::string host;
  std::string port;
  std::string nick;
  std::string target;
  std::string password;  // "" for none
  bool tls = false;

  std::string server() const { return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + port; }
};

// RFC 2812 §2.3.1 nickname characters, up to 32 (servers cut further: ngircd's NICKLEN is 9 by default).
inline bool valid_nick(std::string_view nick) {
  if (nick.empty() || nick.size() > 32) return false;
  auto special = [](char c) { return std::string_view("[]\\`_^{|}").find(c) != std::string_view::npos; };
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (!letter(nick[0]) && !special(nick[0])) return false;
  for (char c : nick)
    if (!letter(c) && !special(c) && !(c >= '0' && c <= '9') && c != '-') return false;
  return true;
}

// A channel name: a prefix, then up to 49 characters other than space, comma, BEL, and control characters.
inline bool valid_channel(std::string_view channel) {
  if (!is_channel(channel) || channel.size() < 2 || channel.size() > 50) return false;
  for (char c : channel)
    if (static_cast<unsigned char>(c) <= 0x20 || c == ',' || c == '\x07') return false;
  return true;
}

// The login, or the refusal: "<field>: why".
inline std::string read_login(const boost::json::object& input, login& out) {
  auto text = [&](const char* name) -> std::optional<std::string> {
    auto* v = input.if_contains(name);
    if (!v || v->is_null()) return std::string();
    if (!v->is_string()) return std::nullopt;
    return std::string(v->as_string());
  };
  auto server = text("server");
  if (!server || server->empty()) return "server: required, as host:port";
  auto colon = server->rfind(':');
  if (colon == std::string::npos || colon == 0) return "server: must be host:port";
  out.host = server->substr(0, colon);
  out.port = server->substr(colon + 1);
  if (out.host.size() > 2 && out.host.front() == '[' && out.host.back() == ']')
    out.host = out.host.substr(1, out.host.size() - 2);
  if (out.host.size() > 253 || out.host.find_first_of(" \t\r\n/[]@") != std::string::npos)
    return "server: must be host:port";
  if (out.port.empty() || out.port.size() > 5 || out.port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(out.port) < 1 || std::stoi(out.port) > 65535)
    return "server: the port must be 1..65535";
  auto nick = text("nick");
  if (!nick || !valid_nick(*nick)) return "nick: must be an IRC nick (a letter first, at most 32 characters)";
  out.nick = *nick;
  auto target = text("target");
  if (!target || target->empty()) return "target: required, a channel (#ops) or a nick";
  if (is_channel(*target) ? !valid_channel(*target) : !valid_nick(*target))
    return "target: must be a channel (#ops) or a nick";
  out.target = *target;
  auto password = text("password");
  if (!password || password->size() > 256 || !line_safe(*password))
    return "password: must be text of at most 256 bytes on one line";
  out.password = *password;
  auto tls = text("tls");
  if (!tls || (!tls->empty() && *tls != "true" && *tls != "false")) return "tls: must be true or false";
  out.tls = *tls == "true";
  return "";
}

}  // namespace irc

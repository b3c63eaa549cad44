// What a server's replies mean to a client (RFC 2812 §5, IRCv3 capability negotiation): the verdict on a
// registration, the CAP request to answer an offer with, a JOIN's refusal numerics, a NAMES reply's nicks and the
// IRCv3 server-time tag.
// Pure functions of the lines; the session acts on them.
#pragma once

#include "irc_line.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace irc {

// The words of a space-separated list, empty ones skipped.
inline std::vector<std::string_view> words_of(std::string_view all) {
  std::vector<std::string_view> out;
  while (!all.empty()) {
    auto end = all.find(' ');
    if (end != 0) out.push_back(all.substr(0, end));
    all = end == std::string_view::npos ? std::string_view() : all.substr(end + 1);
  }
  return out;
}

// A line before the welcome that settles the registration: "" registered, else the refusal's code; nullopt for any
// other line. ngircd refuses a server password with ERROR alone ("Access denied: Bad password?"); any other ERROR
// before the welcome (the server going down, a throttle) says nothing of the credential: the server is away.
inline std::optional<std::string> registration_verdict(const line& l) {
  if (l.command == "001") return "";
  if (l.command == "464") return "invalid_credentials";
  if (l.command == "433") return "nick_in_use";
  if (l.command == "432") return "invalid_input";
  if (l.command != "ERROR") return std::nullopt;
  std::string text = l.params.empty() ? std::string() : l.params.back();
  for (auto& ch : text) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return text.find("password") != std::string::npos ? "invalid_credentials" : "target_unreachable";
}

// What a sign-in's refusal says to the person signing in, by the code of registration_verdict or of a JOIN.
inline std::string refusal_message(const std::string& code) {
  if (code == "invalid_credentials") return "the IRC server refused the password";
  if (code == "nick_in_use") return "that nick is in use on the server";
  if (code == "invalid_input") return "the IRC server refused the nick";
  if (code == "join_refused") return "the IRC server refused to let the nick join that channel";
  return "the IRC server did not answer";
}

// A CAP line during registration: the line to answer it with, or nullopt (the offer continues, or nothing to say).
// "CAP * LS * :part" continues, "CAP * LS :last" ends the offer; ACK or NAK ends the negotiation. offered collects
// the capabilities across an offer's lines.
inline std::optional<std::string> cap_answer(const line& l, std::vector<std::string>& offered) {
  const auto& sub = l.param(1);
  if (sub == "ACK" || sub == "NAK") return build_line("CAP", {"END"});
  if (sub != "LS") return std::nullopt;
  for (auto cap : words_of(l.params.back())) offered.emplace_back(cap.substr(0, cap.find('=')));
  if (l.params.size() >= 4 && l.param(2) == "*") return std::nullopt;
  std::string wanted;
  for (const char* cap : {"message-tags", "account-tag", "server-time"})
    if (std::find(offered.begin(), offered.end(), cap) != offered.end())
      wanted += (wanted.empty() ? "" : " ") + std::string(cap);
  return wanted.empty() ? build_line("CAP", {"END"}) : build_line("CAP", {"REQ", wanted});
}

// The numerics refusing a JOIN (the channel is their second parameter).
inline bool refuses_join(const line& l) {
  static const std::set<std::string> refusals = {"403", "405", "437", "471", "473", "474", "475", "476", "477"};
  return refusals.contains(l.command);
}

// A 353 NAMES reply ("<me> [=*@] <channel> :<names>"): its channel and the nicks without mode prefixes.
inline std::optional<std::pair<std::string, std::vector<std::string>>> names_reply(const line& l) {
  if (l.command != "353" || l.params.size() < 3) return std::nullopt;
  std::vector<std::string> nicks;
  for (auto name : words_of(l.params.back())) {
    while (!name.empty() && std::string_view("~&@%+").find(name.front()) != std::string_view::npos)
      name.remove_prefix(1);
    if (!name.empty()) nicks.emplace_back(name);
  }
  return std::pair{l.params[l.params.size() - 2], std::move(nicks)};
}

// IRCv3 server-time ("2026-12-06T07:42:44.123Z") in unix milliseconds; 0 when it is not that.
inline long long server_time_ms(const std::string& t) {
  std::tm tm{};
  int millis = 0;
  char zone = 0;
  if (std::sscanf(t.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3d%c", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                  &tm.tm_min, &tm.tm_sec, &millis, &zone) != 8 || zone != 'Z')
    return 0;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<long long>(timegm(&tm)) * 1000 + millis;
}

}  // namespace irc

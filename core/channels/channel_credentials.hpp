// A channel's credentials: the secret inputs of the form it signed in with ({"bot_token": "..."}), sealed under
// the host's data key and bound to the plugin and the channel, in database "credentials" under the channel id.
// They are handed back only to that plugin for that channel (on_channel_restore) and go at sign-out,
// deregistration, or when the plugin reports them expired or revoked. Never logged, never in any answer.
#pragma once

#include "core/base/sealing.hpp"
#include "core/store/store.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace xconn {

class channel_credentials {
 public:
  static constexpr std::string_view database = "credentials";

  channel_credentials(store& db, const sealer& seal) : db_(db), seal_(seal) {}

  // Adds to batch the put of the channel's credentials (inputs_json, a JSON object's text), or their erase when
  // there are none (a sign-in without secrets replaces the earlier ones).
  void stage(std::string_view plugin_id, const std::string& channel_id, std::string_view inputs_json,
             write_batch& batch) const;
  static void stage_erase(const std::string& channel_id, write_batch& batch);

  // The channel's credentials (a JSON object's text); nullopt when it has none or they do not open (logged).
  std::optional<std::string> get(std::string_view plugin_id, const std::string& channel_id) const;

 private:
  store& db_;
  const sealer& seal_;
};

}  // namespace xconn

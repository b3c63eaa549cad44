// Sign-outs owed to a plugin that was not loaded when its channels were force-deregistered
// (docs/plugin-contract.md "When a plugin is gone"): kept in LMDB and run through its logout when it is loaded again.
#pragma once

#include "core/plugin_host/connector.hpp"
#include "core/store/store.hpp"

#include <cstddef>
#include <string>
#include <string_view>

namespace xconn {

class deferred_logouts {
 public:
  static constexpr std::string_view database = "deferred_logouts";

  deferred_logouts(store& db, int timeout_s) : db_(db), timeout_s_(timeout_s) {}

  // Records that plugin_id owes channel_id a sign-out (queued to the store; any thread).
  void add(const std::string& plugin_id, const std::string& channel_id);
  // Calls conn's logout for every channel it owes one; a record goes once the plugin answered ok (a failure is
  // tried again at its next load). Returns how many were started. Any thread but an I/O thread's hot path.
  std::size_t run(connector& conn);
  std::size_t pending(std::string_view plugin_id) const;

 private:
  static std::string key(std::string_view plugin_id, std::string_view channel_id);

  store& db_;
  int timeout_s_;
};

}  // namespace xconn

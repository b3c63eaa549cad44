// connector_id issue and reuse (spec §8.1-8.2): an id is durable, bound to one card, and reused when
// xAgent presents it again.
#pragma once

#include "core/store/store.hpp"

#include <functional>
#include <string>
#include <string_view>
#include <system_error>

namespace xconn {

class connector_ids {
 public:
  static constexpr std::string_view database = "connector_ids";
  explicit connector_ids(store& db) : db_(db) {}

  // Reuses requested when it was issued for card_id; otherwise issues and persists a new `conn_` id.
  // done runs once the id is durable (on the store's writer thread, or at once when reused).
  void resolve(std::string_view card_id, std::string_view requested,
               std::function<void(std::string connector_id, std::error_code)> done);

 private:
  store& db_;
};

}  // namespace xconn

#include "core/channels/connector_ids.hpp"

#include "core/base/ids.hpp"

#include <boost/json.hpp>

namespace xconn {

void connector_ids::resolve(std::string_view card_id, std::string_view requested,
                            std::function<void(std::string, std::error_code)> done) {
  if (!requested.empty()) {
    if (auto record = db_.get(database, requested)) {
      boost::system::error_code ec;
      auto v = boost::json::parse(*record, ec);
      if (!ec && v.is_object() && v.as_object().contains("card_id") && v.as_object().at("card_id") == boost::json::string_view(card_id.data(), card_id.size())) {
        done(std::string(requested), {});
        return;
      }
    }
  }
  std::string id = random_id("conn_");
  boost::json::object record{{"card_id", card_id}, {"issued_at", unix_ms()}};
  write_batch batch;
  batch.put(std::string(database), id, boost::json::serialize(record));
  db_.write(std::move(batch), [id, done = std::move(done)](std::error_code ec) { done(id, ec); });
}

}  // namespace xconn

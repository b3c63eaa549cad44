#include "core/messaging/last_inbound.hpp"

#include <boost/json.hpp>

namespace xconn {
namespace json = boost::json;

std::string last_inbound_record(const last_inbound& l) {
  return json::serialize(json::object{{"channel_key", l.channel_key}, {"msg_id", l.message_id},
                                      {"sender_id", l.sender_id}, {"sender_name", l.sender_name}, {"role", l.role}});
}

std::optional<last_inbound> last_inbound_from_record(std::string_view text) {
  json::error_code ec;
  auto v = json::parse(text, ec);
  if (ec || !v.is_object()) return std::nullopt;
  const auto& o = v.as_object();
  auto str = [&](const char* key) {
    auto* x = o.if_contains(key);
    return x && x->is_string() ? std::string(x->as_string()) : std::string();
  };
  last_inbound l{str("channel_key"), str("msg_id"), str("sender_id"), str("sender_name"), str("role")};
  if (l.channel_key.empty()) return std::nullopt;
  return l;
}

}  // namespace xconn

#include "payload_fields.hpp"

namespace xconn::load {

bool payload_reader::read(std::string_view payload, payload_fields& out) {
  out = {};
  buffer_.assign(payload);
  buffer_.resize(payload.size() + simdjson::SIMDJSON_PADDING);
  simdjson::ondemand::document doc;
  if (parser_.iterate(buffer_.data(), payload.size(), buffer_.size()).get(doc)) return false;
  simdjson::ondemand::object object;
  if (doc.get_object().get(object)) return false;
  for (auto field : object) {
    std::string_view key;
    if (field.unescaped_key().get(key)) return false;
    std::string_view* slot = key == "status"       ? &out.status
                             : key == "code"       ? &out.code
                             : key == "message_id" ? &out.message_id
                             : key == "text"       ? &out.text
                                                   : nullptr;
    if (!slot) continue;  // skipped by the iteration
    if (field.value().get_string().get(*slot)) *slot = {};
  }
  return true;
}

}  // namespace xconn::load

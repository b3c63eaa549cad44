#include "payload_fields.hpp"

#include <simdjson.h>

namespace xconn::load {

struct payload_reader::state {
  simdjson::ondemand::parser parser;
  std::string buffer;
};

payload_reader::payload_reader() : state_(std::make_unique<state>()) {}
payload_reader::~payload_reader() = default;

bool payload_reader::read(std::string_view payload, payload_fields& out) {
  auto& [parser, buffer] = *state_;
  out = {};
  buffer.assign(payload);
  buffer.resize(payload.size() + simdjson::SIMDJSON_PADDING);
  simdjson::ondemand::document doc;
  if (parser.iterate(buffer.data(), payload.size(), buffer.size()).get(doc)) return false;
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

#include "core/wire/json_object_check.hpp"

#include <simdjson.h>

#include <string>

namespace xconn {

json_object_check check_json_object(std::string_view text, std::string_view member) {
  // Both kept between calls of a thread: simdjson reads SIMDJSON_PADDING bytes past the text's end.
  thread_local simdjson::dom::parser parser;
  thread_local std::string padded;
  padded.assign(text);
  padded.resize(text.size() + simdjson::SIMDJSON_PADDING);
  simdjson::dom::element root;
  if (parser.parse(padded.data(), text.size(), false).get(root) != simdjson::SUCCESS)
    return json_object_check::invalid;
  simdjson::dom::object object;
  if (root.get_object().get(object) != simdjson::SUCCESS) return json_object_check::not_object;
  simdjson::dom::element found;
  return object.at_key(member).get(found) == simdjson::SUCCESS ? json_object_check::object_with_member
                                                                 : json_object_check::object;
}

}  // namespace xconn

// A JSON text checked with simdjson, without building a DOM: whether it is an object and whether its top level
// holds a given member. Lets a plugin's answer that needs no change go out as the bytes it came in.
#pragma once

#include <string_view>

namespace xconn {

enum class json_object_check {
  invalid,              // not JSON, or JSON simdjson will not vouch for (e.g. an integer past 64 bits)
  not_object,           // valid JSON, not an object
  object,               // an object without the member
  object_with_member,   // an object with the member at its top level
};

json_object_check check_json_object(std::string_view text, std::string_view member);

}  // namespace xconn

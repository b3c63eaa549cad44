// JSON written by appending to a string: no DOM built for what is only written out (packet_bench measures the
// difference: a DOM-built envelope cost 30 times the appended one).
#pragma once

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <string>
#include <string_view>

namespace xconn {

// A JSON string: what RFC 8259 requires escaped is escaped, the rest (UTF-8 included) copied as it is.
void append_json_string(std::string& out, std::string_view s);

// ,"key":"value" (the comma always: the object's first member is written by the caller).
void append_json_member(std::string& out, std::string_view key, std::string_view value);

// Serialized straight into out: no copy of the value, no string of its own.
void append_json_value(std::string& out, const boost::json::object& o);
void append_json_value(std::string& out, const boost::json::array& a);

}  // namespace xconn

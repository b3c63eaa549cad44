// The few string members the load tool reads out of a packet payload (status, code, message_id, text), with
// simdjson on-demand in one pass over a padded copy: the client must stay cheaper than the server it loads.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace xconn::load {

struct payload_fields {
  std::string_view status, code, message_id, text;  // "" when absent; valid until the next read
};

class payload_reader {
 public:
  payload_reader();
  ~payload_reader();

  // Reads payload (a JSON object's text); nullopt-like false when it is not an object.
  bool read(std::string_view payload, payload_fields& out);

 private:
  struct state;  // the simdjson parser and the padded copy: simdjson stays out of this header
  std::unique_ptr<state> state_;
};

}  // namespace xconn::load

// The plugin's config section (connectors.irc): one row per key, every message naming the key, never a value.
#pragma once

#include <xconn/adapter/config_table.hpp>

#include <boost/json.hpp>

#include <string>

namespace irc {

struct settings {
  std::string ca_file;         // extra trusted CA certificates (PEM) for tls=true servers, beside the system store
  int connect_timeout_s = 15;  // a connection and its registration
  int lines_per_second = 2;    // flood control, per connection
};

inline const xconn::adapter::config_table<settings> config_rows{
    {"config.ca_file", xconn::adapter::config_rule::file_path(), &settings::ca_file},
    {"config.connect_timeout_s", xconn::adapter::config_rule::integer(1, 120), &settings::connect_timeout_s},
    {"policy.lines_per_second", xconn::adapter::config_rule::integer(1, 20), &settings::lines_per_second},
};

}  // namespace irc

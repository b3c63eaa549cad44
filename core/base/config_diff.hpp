// What differs between two configurations outside the plugins' sections: the keys only a restart applies.
#pragma once

#include "core/base/config.hpp"

#include <string>
#include <vector>

namespace xconn {

// Dotted keys ("server.listen", "plugins.threads") whose values differ between running and next, in file order.
// The connectors.* sections are not compared here: they reload without a restart.
std::vector<std::string> restart_only_changes(const config& running, const config& next);

}  // namespace xconn

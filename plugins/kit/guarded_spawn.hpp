// Forwards to the adapter layer's spawn_guarded (xconn/adapter/guarded_spawn.hpp) until its last includer moves there.
#pragma once

#include <xconn/adapter/guarded_spawn.hpp>

namespace xconn::kit {
using xconn::adapter::spawn_guarded;
}  // namespace xconn::kit

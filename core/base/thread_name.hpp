// Names the calling thread as top, perf and gdb show it (at most 15 characters; longer names are cut).
#pragma once

#include <pthread.h>

#include <algorithm>

#include <string>

namespace xconn {

inline void name_this_thread(std::string name) {
  name.resize(std::min<std::size_t>(name.size(), 15));
  pthread_setname_np(pthread_self(), name.c_str());
}

}  // namespace xconn

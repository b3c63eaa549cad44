#include "core/app/open_file_limit.hpp"

#include <sys/resource.h>

#include <algorithm>

namespace xconn {

open_file_limit raise_open_file_limit(std::uint64_t max_connections) {
  open_file_limit out;
  out.needed = max_connections + open_file_limit::reserve;
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return out;
  out.before = out.after = limit.rlim_cur;
  out.hard = limit.rlim_max;
  if (limit.rlim_cur >= out.needed) return out;
  limit.rlim_cur = std::min<rlim_t>(out.needed, limit.rlim_max);
  if (::setrlimit(RLIMIT_NOFILE, &limit) == 0) out.after = limit.rlim_cur;
  return out;
}

}  // namespace xconn

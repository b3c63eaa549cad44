// After the last restart: every queued inbound message drained and acked (until the server holds none), every
// accepted final and every answered side-effect tool repeated, every uploaded file downloaded; then the audit
// of the whole journal. Exit 0 when no promise was broken, 1 otherwise, 2 when it could not run.
#pragma once

#include "load.hpp"

namespace xconn::chaos {

int run_verify(const run_options& o);

}  // namespace xconn::chaos

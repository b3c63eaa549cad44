// Reads the whole journal after the last restart and checks every promise of the host against what the
// client saw; the counts and each violation found (the first few in detail).
#pragma once

#include "journal.hpp"

#include <string>
#include <vector>

namespace xconn::chaos {

struct audit_report {
  int epochs = 0;  // load epochs (kills)
  // Inbound: injected = answered 202 (durable); acked = an ack sent; confirmed = an ack known durable.
  long long injected = 0, delivered = 0, deliveries = 0, acked = 0, confirmed = 0, lost = 0;
  long long redelivered_after_ack = 0;    // violation: delivered again after its ack was confirmed
  long long redelivered_unconfirmed = 0;  // allowed: the ack may not have been committed before the kill
  long long unacked = 0, unacked_redelivered = 0;
  bool drained = false;
  long long health_expired = 0, health_evicted = 0, health_rejected = 0;
  // Finals.
  long long finals = 0, finals_accepted = 0, duplicates_answered = 0, accepted_twice = 0, repeat_not_duplicate = 0,
            finals_other = 0;
  // Side-effect tools.
  long long tools = 0, tool_repeats = 0, rerun = 0, tool_errors = 0;
  // Files.
  long long files = 0, intact = 0, files_bad = 0;
  // Uploads past files.max_bytes: refused 413, or (a violation) accepted.
  long long over_limit = 0, over_limit_refused = 0, over_limit_accepted = 0;
  // Clocks: created_at of a message and expires_at of its files, compared at each redelivery.
  long long expiry_checked = 0, expiry_reset = 0;
  std::vector<std::string> problems;

  long long violations() const;
};

audit_report audit(const std::vector<journal_entry>& entries, int verify_epoch);
void print(const audit_report& r);

}  // namespace xconn::chaos

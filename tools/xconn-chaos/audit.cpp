#include "audit.hpp"

#include <cstdio>
#include <map>
#include <set>
#include <sstream>

namespace xconn::chaos {

long long audit_report::violations() const {
  return lost + redelivered_after_ack + (unacked - unacked_redelivered) + (drained ? 0 : 1) + accepted_twice +
         repeat_not_duplicate + rerun + files_bad + expiry_reset + over_limit_accepted;
}

namespace {

std::map<std::string, std::string> parse_files(const std::string& spec) {
  std::map<std::string, std::string> out;
  if (spec == "-") return out;
  std::stringstream ss(spec);
  std::string item;
  while (std::getline(ss, item, ',')) {
    auto eq = item.find('=');
    if (eq != std::string::npos) out[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return out;
}

}  // namespace

audit_report audit(const std::vector<journal_entry>& entries, int verify_epoch) {
  audit_report r;
  auto problem = [&](std::string text) {
    if (r.problems.size() < 20) r.problems.push_back(std::move(text));
  };
  std::set<std::string> injected;
  std::map<std::string, std::vector<int>> deliveries;       // message_id -> epochs, in order
  std::map<std::string, std::set<int>> acked_in;            // message_id -> epochs with an ack sent
  std::map<int, std::map<long long, std::string>> acks;     // epoch -> seq -> message_id
  std::map<int, long long> confirmed_upto;
  std::map<std::string, int> confirmed;                     // message_id -> epoch of the confirmation
  std::map<std::string, std::string> created_at, expires_at;
  std::map<std::string, int> accepted;                      // final message_id -> accepted answers
  std::set<std::string> finals;
  std::map<std::string, std::set<std::string>> tool_results;
  std::set<std::string> tool_keys;
  std::map<std::string, std::string> files;                 // ref -> sha256
  std::set<int> epochs;

  for (const auto& e : entries) {
    if (e.kind == "epoch") epochs.insert(e.epoch);
    else if (e.kind == "inject") injected.insert(e.at(0));
    else if (e.kind == "deliver") {
      const auto& id = e.at(0);
      ++r.deliveries;
      if (auto c = confirmed.find(id); c != confirmed.end()) {
        ++r.redelivered_after_ack;
        problem("inbound " + id + " delivered in epoch " + std::to_string(e.epoch) + " after its ack was confirmed in epoch " +
                std::to_string(c->second));
      } else if (acked_in.contains(id)) {
        ++r.redelivered_unconfirmed;
      }
      auto& seen = deliveries[id];
      if (!seen.empty()) {
        ++r.expiry_checked;
        if (created_at[id] != e.at(1)) {
          ++r.expiry_reset;
          problem("inbound " + id + " created_at " + created_at[id] + " became " + e.at(1) + " in epoch " +
                  std::to_string(e.epoch));
        }
      } else {
        created_at[id] = e.at(1);
      }
      for (const auto& [ref, exp] : parse_files(e.at(2))) {
        auto [it, first] = expires_at.emplace(ref, exp);
        if (first) continue;
        ++r.expiry_checked;
        if (it->second != exp) {
          ++r.expiry_reset;
          problem("file " + ref + " expires_at " + it->second + " became " + exp + " in epoch " + std::to_string(e.epoch));
        }
      }
      seen.push_back(e.epoch);
    } else if (e.kind == "ack") {
      acks[e.epoch][std::stoll(e.at(0))] = e.at(1);
      acked_in[e.at(1)].insert(e.epoch);
    } else if (e.kind == "confirm") {
      long long upto = std::stoll(e.at(0));
      auto& from = confirmed_upto[e.epoch];
      auto& list = acks[e.epoch];
      for (auto it = list.upper_bound(from); it != list.end() && it->first <= upto; ++it)
        confirmed.emplace(it->second, e.epoch);
      if (upto > from) from = upto;
    } else if (e.kind == "final_sent") {
      finals.insert(e.at(0));
    } else if (e.kind == "final_ack") {
      const auto& id = e.at(0);
      const auto& status = e.at(1);
      int before = accepted[id];
      if (status == "accepted") {
        if (++accepted[id] == 2) {
          ++r.accepted_twice;
          problem("final " + id + " accepted a second time in epoch " + std::to_string(e.epoch));
        }
      } else if (status == "duplicate") {
        if (before > 0) ++r.duplicates_answered;
      } else {
        ++r.finals_other;
        if (status.find("message_id_conflict") != std::string::npos) {
          ++r.repeat_not_duplicate;
          problem("final " + id + " (same content) answered " + status + " in epoch " + std::to_string(e.epoch));
        }
      }
      if (e.epoch == verify_epoch && before > 0 && status != "duplicate" &&
          status.find("message_id_conflict") == std::string::npos) {
        ++r.repeat_not_duplicate;
        problem("final " + id + " repeated after the restarts answered " + status);
      }
    } else if (e.kind == "tool_sent") {
      if (!tool_keys.insert(e.at(0)).second) ++r.tool_repeats;
    } else if (e.kind == "tool_result") {
      auto& results = tool_results[e.at(0)];
      results.insert(e.at(1));
      if (results.size() == 2) {
        ++r.rerun;
        problem("side-effect tool " + e.at(0) + " ran again in epoch " + std::to_string(e.epoch) + " (new result " +
                e.at(1) + ")");
      }
    } else if (e.kind == "tool_error") {
      ++r.tool_errors;
    } else if (e.kind == "file") {
      files[e.at(0)] = e.at(1);
    } else if (e.kind == "file_check") {
      auto it = files.find(e.at(0));
      if (it == files.end()) continue;
      if (e.at(1) == "200" && e.at(2) == it->second) {
        ++r.intact;
      } else {
        ++r.files_bad;
        problem("file " + e.at(0) + " answered " + e.at(1) + " with sha256 " + e.at(2) + ", uploaded " + it->second);
      }
    } else if (e.kind == "over_limit") {
      ++r.over_limit;
      if (e.at(0) == "413") {
        ++r.over_limit_refused;
      } else if (e.at(0) == "201") {
        ++r.over_limit_accepted;
        problem("an upload past files.max_bytes was accepted as " + e.at(1) + " in epoch " + std::to_string(e.epoch));
      }
    } else if (e.kind == "health") {
      r.health_expired = std::stoll(e.at(0));
      r.health_evicted = std::stoll(e.at(1));
      r.health_rejected = std::stoll(e.at(2));
    } else if (e.kind == "drained") {
      r.drained = e.at(0) == "1";
    }
  }

  epochs.erase(verify_epoch);
  r.epochs = static_cast<int>(epochs.size());
  r.injected = static_cast<long long>(injected.size());
  r.confirmed = static_cast<long long>(confirmed.size());
  r.acked = static_cast<long long>(acked_in.size());
  for (const auto& id : injected) {
    auto it = deliveries.find(id);
    if (it == deliveries.end()) {
      ++r.lost;
      problem("inbound " + id + " was answered 202 and never delivered");
    }
  }
  r.delivered = static_cast<long long>(deliveries.size());
  for (const auto& [id, seen] : deliveries) {
    std::set<int> in(seen.begin(), seen.end());
    for (int epoch : in) {
      if (epoch == verify_epoch) continue;
      auto a = acked_in.find(id);
      if (a != acked_in.end() && a->second.contains(epoch)) continue;
      ++r.unacked;
      if (in.upper_bound(epoch) != in.end()) ++r.unacked_redelivered;
      else problem("inbound " + id + " delivered in epoch " + std::to_string(epoch) + " without an ack and never again");
    }
  }
  r.finals = static_cast<long long>(finals.size());
  for (const auto& [id, n] : accepted) r.finals_accepted += n > 0 ? 1 : 0;
  r.tools = static_cast<long long>(tool_results.size());
  r.files = static_cast<long long>(files.size());
  return r;
}

void print(const audit_report& r) {
  std::printf(
      "kills=%d\n"
      "inbound injected=%lld delivered=%lld (deliveries %lld) acked=%lld (confirmed durable %lld) lost=%lld "
      "redelivered_after_ack=%lld unacked_redelivered=%lld/%lld redelivered_after_unconfirmed_ack=%lld drained=%s "
      "(server: expired=%lld evicted=%lld rejected=%lld)\n"
      "finals=%lld accepted=%lld duplicates_answered=%lld accepted_twice=%lld repeat_not_duplicate=%lld other=%lld\n"
      "tools=%lld repeats=%lld rerun=%lld errors=%lld\n"
      "files=%lld intact=%lld bad=%lld over_limit=%lld (refused 413: %lld, accepted: %lld)\n"
      "expiry checked=%lld expiry_reset=%lld\n",
      r.epochs, r.injected, r.delivered, r.deliveries, r.acked, r.confirmed, r.lost, r.redelivered_after_ack,
      r.unacked_redelivered, r.unacked, r.redelivered_unconfirmed, r.drained ? "yes" : "NO", r.health_expired,
      r.health_evicted, r.health_rejected, r.finals, r.finals_accepted, r.duplicates_answered, r.accepted_twice,
      r.repeat_not_duplicate, r.finals_other, r.tools, r.tool_repeats, r.rerun, r.tool_errors, r.files, r.intact,
      r.files_bad, r.over_limit, r.over_limit_refused, r.over_limit_accepted, r.expiry_checked, r.expiry_reset);
  for (const auto& p : r.problems) std::printf("VIOLATION %s\n", p.c_str());
  std::printf("violations=%lld\n", r.violations());
}

}  // namespace xconn::chaos

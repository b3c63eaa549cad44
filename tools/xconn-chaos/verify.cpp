#include "verify.hpp"

#include "audit.hpp"
#include "journal.hpp"
#include "session.hpp"
#include "world.hpp"

#include <chrono>
#include <cstdio>

namespace xconn::chaos {
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

namespace {

// Acks everything that arrives until the server holds no inbound message and every ack is known durable (a
// fresh final answered "accepted" after the last ack), within the deadline.
bool drain(session& s, journal& j, const target& t, const world& w, int epoch, std::chrono::seconds deadline) {
  auto until = steady::now() + deadline;
  int probe = 0;
  while (s.alive() && steady::now() < until) {
    s.pump(100ms);
    auto counters = inbound_health(t);
    if (!counters || counters->pending != 0 || s.outstanding() != 0) continue;
    if (s.acks_confirmed() == s.acks_sent()) {
      j.add("health", epoch,
            {std::to_string(counters->expired), std::to_string(counters->evicted), std::to_string(counters->rejected),
             std::to_string(counters->pending)});
      return true;
    }
    s.send_final(w.channels.front(), "fv" + std::to_string(epoch) + "-" + std::to_string(++probe), true);
    s.settle(10s);
  }
  return false;
}

// Sends in slices of 256 and waits for each slice's answers.
template <typename Send>
bool repeat_all(session& s, const std::vector<std::string>& ids, Send send) {
  std::size_t i = 0;
  while (i < ids.size()) {
    for (std::size_t n = 0; n < 256 && i < ids.size(); ++n, ++i) send(ids[i]);
    if (!s.settle(30s)) return false;
  }
  return true;
}

}  // namespace

int run_verify(const run_options& o) {
  auto w = world::from(journal::read(o.journal_path));
  if (w.connector_id.empty() || w.channels.empty()) {
    std::fprintf(stderr, "xconn-chaos: the journal has no setup\n");
    return 2;
  }
  int epoch = w.last_epoch + 1;
  {
    journal j(o.journal_path);
    j.add("verify", epoch, {std::to_string(o.daemon.port)});
    session s(o.daemon.port, o.daemon.key, j, epoch);
    s.on_delivery = [&s](const delivery& d) { s.ack(d.channel, d.message_id); };
    if (!s.start(w.connector_id, w.channels)) {
      std::fprintf(stderr, "xconn-chaos: the restarted daemon on port %u did not take the hello and channels\n",
                   o.daemon.port);
      return 2;
    }
    bool drained = drain(s, j, o.daemon, w, epoch, 60s);
    j.add("drained", epoch, {drained ? "1" : "0"});
    auto channel = [&](const std::string& id) {
      auto it = w.channel_of.find(id);
      return it == w.channel_of.end() ? w.channels.front() : it->second;
    };
    std::vector<std::string> finals = w.finals_accepted;
    finals.insert(finals.end(), w.finals_unanswered.begin(), w.finals_unanswered.end());
    bool finals_done = repeat_all(s, finals, [&](const std::string& id) { s.send_final(channel(id), id, false); });
    std::vector<std::string> keys;
    for (const auto& [k, result] : w.tool_results) keys.push_back(k);
    keys.insert(keys.end(), w.tools_unanswered.begin(), w.tools_unanswered.end());
    bool tools_done = repeat_all(s, keys, [&](const std::string& k) { s.send_tool(channel(k), k, false); });
    if (!finals_done || !tools_done) j.add("repeats_unanswered", epoch, {});
    for (const auto& ref : w.files) {
      auto d = download(o.daemon, ref);
      j.add("file_check", epoch, {ref, std::to_string(d.status), d.sha256.empty() ? "-" : d.sha256});
    }
    // Side-effect repeats that ran again would have pushed new messages: take them in too.
    s.pump(200ms);
  }
  auto report = audit(journal::read(o.journal_path), epoch);
  print(report);
  return report.violations() == 0 ? 0 : 1;
}

}  // namespace xconn::chaos

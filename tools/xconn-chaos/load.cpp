#include "load.hpp"

#include "journal.hpp"
#include "session.hpp"
#include "timings.hpp"
#include "world.hpp"

#include "core/base/crypto.hpp"

#include <chrono>
#include <cstdio>
#include <deque>
#include <random>
#include <set>

namespace xconn::chaos {
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

int run_setup(const run_options& o) {
  journal j(o.journal_path);
  session s(o.daemon.port, o.daemon.key, j, 0);
  if (!s.start("", {})) {
    std::fprintf(stderr, "xconn-chaos: no hello with the daemon on port %u\n", o.daemon.port);
    return 2;
  }
  j.add("setup", 0, {s.connector_id()});
  for (int i = 0; i < o.channels; ++i) {
    auto id = s.new_signed_in_channel();
    if (id.empty()) {
      std::fprintf(stderr, "xconn-chaos: a channel could not be opened and signed in\n");
      return 2;
    }
    j.add("channel", 0, {id});
  }
  return 0;
}

namespace {

struct held_ack {
  delivery d;
  long long release_at;  // iteration
};

// One epoch of mixed load: inject bursts (some with an attachment), fresh and repeated finals, fresh and
// repeated side-effect tools, uploads; inbound messages acked at once or a few iterations later (so that a
// kill finds some delivered and not acked).
class load_epoch {
 public:
  load_epoch(const run_options& o, world w, int epoch)
      : o_(o), w_(std::move(w)), epoch_(epoch), j_(o.journal_path), s_(o.daemon.port, o.daemon.key, j_, epoch),
        rng_(o.seed), t_(o.timings_path) {
    s_.on_step = [this](const char* step) { t_.mark(step, step == std::string("hello") ? s_.connector_id() : ""); };
    s_.on_delivery = [this](const delivery& d) {
      note_delivery(d.message_id);
      if (pick(100) < 75) s_.ack(d.channel, d.message_id);
      else held_.push_back({d, iteration_ + 1 + pick(40)});
    };
    s_.on_final_answer = [this](const std::string& id, const std::string& status) {
      if (status == "accepted") w_.finals_accepted.push_back(id);
    };
    s_.on_tool_answer = [this](const std::string& key, const std::string& mid) { w_.tool_results.emplace(key, mid); };
  }

  int run() {
    j_.add("epoch", epoch_, {std::to_string(o_.daemon.port)});
    t_.mark("start");
    t_.mark("unacked", std::to_string(w_.delivered_unacked.size()));
    if (!s_.start(w_.connector_id, w_.channels)) return 0;  // killed before the channels were open
    auto until = steady::now() + std::chrono::seconds(o_.max_seconds);
    bool up = true;
    while (up && s_.alive() && steady::now() < until) {
      ++iteration_;
      release_held();
      up = act();
      if (up) up = s_.pump(5ms);
    }
    t_.mark("redelivered", std::to_string(redelivered_.size()) + " " + std::to_string(w_.delivered_unacked.size()));
    return 0;
  }

 private:
  void note_delivery(const std::string& id) {
    if (!seen_delivery_) {
      seen_delivery_ = true;
      t_.mark("first_delivery", id);
    }
    if (!w_.delivered_unacked.contains(id) || !redelivered_.insert(id).second) return;
    if (redelivered_.size() == 1) t_.mark("first_redelivery", id);
    if (redelivered_.size() == w_.delivered_unacked.size())
      t_.mark("all_redelivered", std::to_string(redelivered_.size()));
  }

  unsigned pick(unsigned n) { return std::uniform_int_distribution<unsigned>(0, n - 1)(rng_); }
  const std::string& any_channel() { return w_.channels[pick(static_cast<unsigned>(w_.channels.size()))]; }
  std::string fresh(const char* prefix) { return prefix + std::to_string(epoch_) + "-" + std::to_string(++serial_); }

  void release_held() {
    while (!held_.empty() && held_.front().release_at <= iteration_) {
      s_.ack(held_.front().d.channel, held_.front().d.message_id);
      held_.pop_front();
    }
  }

  // One action; false once the daemon does not answer.
  bool act() {
    unsigned roll = pick(100);
    bool room = s_.outstanding() < 64;
    if (roll < 35) return inject_burst();
    if (roll < 55 && room) {
      auto id = fresh("f");
      const auto& channel = any_channel();
      w_.channel_of[id] = channel;
      s_.send_final(channel, id, true);
    } else if (roll < 75 && room) {
      auto key = fresh("t");
      const auto& channel = any_channel();
      w_.channel_of[key] = channel;
      s_.send_tool(channel, key, true);
    } else if (roll < 80 && room && !w_.finals_accepted.empty()) {
      const auto& id = w_.finals_accepted[pick(static_cast<unsigned>(w_.finals_accepted.size()))];
      s_.send_final(channel_of(id), id, false);
    } else if (roll < 85 && room && !w_.tool_results.empty()) {
      auto it = w_.tool_results.begin();
      std::advance(it, pick(static_cast<unsigned>(w_.tool_results.size())));
      s_.send_tool(channel_of(it->first), it->first, false);
    } else if (roll >= 85) {
      return upload_one();
    }
    return true;
  }

  // The channel a final or a tool key was first sent on (repeats must go there: both are scoped to it).
  std::string channel_of(const std::string& id) {
    auto it = w_.channel_of.find(id);
    return it == w_.channel_of.end() ? w_.channels.front() : it->second;
  }

  bool inject_burst() {
    unsigned n = 1 + pick(6);
    for (unsigned i = 0; i < n; ++i) {
      const auto& channel = any_channel();
      auto msg_id = fresh("m");
      bool with_file = pick(6) == 0;
      auto r = inject(o_.daemon, channel, msg_id, with_file);
      if (r.status == 0) return false;
      if (r.status == 202 && !r.message_id.empty())
        j_.add(r.duplicate ? "inject_duplicate" : "inject", epoch_, {r.message_id, channel, with_file ? "1" : "0"});
      else
        j_.add("inject_refused", epoch_, {msg_id, std::to_string(r.status)});
    }
    return true;
  }

  bool upload_one() {
    if (o_.max_bytes && pick(3) == 0) return upload_over_limit();
    std::string bytes(1 + pick(256 * 1024), '\0');
    for (auto& c : bytes) c = static_cast<char>(rng_() & 0xff);
    const auto& channel = any_channel();
    auto r = upload(o_.daemon, channel, bytes);
    if (r.status == 0) return false;
    if (r.status == 201 && !r.file_ref.empty()) {
      auto sha = xconn::sha256_hex(bytes);
      j_.add("file", epoch_, {r.file_ref, sha, r.expires_at, std::to_string(bytes.size())});
      if (r.sha256 != sha) j_.add("file_answer_mismatch", epoch_, {r.file_ref, r.sha256});
    } else {
      j_.add("upload_refused", epoch_, {std::to_string(r.status)});
    }
    return true;
  }

  // A file past files.max_bytes whose Content-Length is still within the allowance: the host reads it, stores
  // chunks, then refuses it (413) and erases them, often in the transaction that wrote the last of them. That
  // leaves pages allocated and freed unwritten past the end of data.mdb, which the next start must accept.
  bool upload_over_limit() {
    std::string bytes(o_.max_bytes + 1 + pick(32 * 1024), '\0');
    for (auto& c : bytes) c = static_cast<char>(rng_() & 0xff);
    auto r = upload(o_.daemon, any_channel(), bytes);
    if (r.status == 0) return false;
    j_.add("over_limit", epoch_, {std::to_string(r.status), r.file_ref.empty() ? "-" : r.file_ref});
    return true;
  }

  const run_options& o_;
  world w_;
  int epoch_;
  journal j_;
  session s_;
  std::mt19937_64 rng_;
  std::deque<held_ack> held_;
  long long iteration_ = 0;
  long long serial_ = 0;
  timings t_;
  std::set<std::string> redelivered_;
  bool seen_delivery_ = false;
};

}  // namespace

int run_load(const run_options& o) {
  auto w = world::from(journal::read(o.journal_path));
  if (w.connector_id.empty() || w.channels.empty()) {
    std::fprintf(stderr, "xconn-chaos: the journal has no setup (run setup first)\n");
    return 2;
  }
  int epoch = w.last_epoch + 1;
  return load_epoch(o, std::move(w), epoch).run();
}

}  // namespace xconn::chaos

#include "core/channels/tool_calls.hpp"

#include "core/base/crypto.hpp"
#include "core/base/ids.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <iterator>
#include <optional>

namespace xconn {
namespace json = boost::json;

namespace {

std::string to_record(const tool_outcome& o, long long at) {
  json::object r{{"at", at}, {"ok", o.ok}};
  if (o.ok) {
    r["result"] = o.result_json;
  } else {
    r["code"] = o.code;
    r["message"] = o.message;
  }
  return json::serialize(r);
}

// The record's outcome when it is still inside the window.
std::optional<tool_outcome> from_record(std::string_view text, long long oldest_ms) {
  boost::system::error_code ec;
  auto v = json::parse(text, ec);
  if (ec || !v.is_object()) return std::nullopt;
  auto& r = v.as_object();
  auto* at = r.if_contains("at");
  auto* ok = r.if_contains("ok");
  if (!at || !at->is_int64() || at->as_int64() < oldest_ms || !ok || !ok->is_bool()) return std::nullopt;
  tool_outcome o;
  o.ok = ok->as_bool();
  auto str = [&](const char* k) { auto* x = r.if_contains(k); return x && x->is_string() ? std::string(x->as_string()) : ""; };
  o.result_json = str("result");
  o.code = str("code");
  o.message = str("message");
  return o;
}

}  // namespace

std::string tool_calls::key_for(std::string_view plugin_id, std::string_view channel_id, std::string_view key) {
  // The caller's key is hashed: it can be any length, and LMDB keys end at 511 bytes.
  std::string out;
  out.append(plugin_id).push_back('\n');
  out.append(channel_id).push_back('\n');
  out.append(sha256_hex(key));
  return out;
}

void tool_calls::drop_channel(std::string_view plugin_id, std::string_view channel_id) {
  std::string prefix = key_for(plugin_id, channel_id, "");
  prefix.resize(prefix.rfind('\n') + 1);  // "<plugin>\n<channel>\n"
  write_batch batch;
  db_.scan(database, prefix, [&](std::string_view key, std::string_view) {
    batch.erase(std::string(database), std::string(key));
    return true;
  });
  if (!batch.ops.empty()) db_.write(std::move(batch));
}

void tool_calls::run_once(const std::string& key, run_fn run, done_fn done) {
  long long oldest = unix_ms() - std::chrono::duration_cast<std::chrono::milliseconds>(window_).count();
  std::optional<tool_outcome> replay;
  bool ended_record = false;  // a record of this key is stored, its window over, not swept yet
  {
    std::lock_guard lock(mutex_);
    if (auto it = running_.find(key); it != running_.end()) {
      it->second.push_back(std::move(done));
      return;
    }
    auto record = db_.get(database, key);
    if (record) replay = from_record(*record, oldest);
    ended_record = record && !replay;
    if (!replay) running_[key].push_back(std::move(done));
  }
  if (replay) return done(std::move(*replay));  // outside the lock: done may start another call
  run([this, key, ended_record](tool_outcome outcome, bool keep) {
    auto answer_all = [this, key, outcome](std::error_code) {
      std::vector<done_fn> waiting;
      {
        std::lock_guard lock(mutex_);
        auto it = running_.find(key);
        if (it == running_.end()) return;
        waiting = std::move(it->second);
        running_.erase(it);
      }
      for (auto& w : waiting) w(outcome);
    };
    if (!keep) return answer_all({});
    long long at = unix_ms();
    write_batch batch;
    batch.put(std::string(database), key, to_record(outcome, at));
    // Even a failed commit answers: the tool ran, and xAgent must hear how; only the replay is lost.
    db_.write(std::move(batch), [this, key, at, ended_record, answer_all](std::error_code ec) {
      if (!ec) {
        std::lock_guard lock(mutex_);
        by_age_.push_back({at, key});
        if (ended_record) ++replaced_[key];
      }
      answer_all(ec);
    });
  });
}

void tool_calls::load() {
  std::vector<recorded> found;
  db_.scan(database, "", [&](std::string_view key, std::string_view value) {
    boost::system::error_code ec;
    auto v = json::parse(value, ec);
    const json::value* at = !ec && v.is_object() ? v.as_object().if_contains("at") : nullptr;
    found.push_back({at && at->is_int64() ? at->as_int64() : 0, std::string(key)});  // unreadable: ended
    return true;
  });
  std::sort(found.begin(), found.end(), [](const recorded& a, const recorded& b) { return a.at < b.at; });
  std::lock_guard lock(mutex_);
  by_age_.assign(std::make_move_iterator(found.begin()), std::make_move_iterator(found.end()));
}

std::size_t tool_calls::sweep() {
  long long oldest = unix_ms() - std::chrono::duration_cast<std::chrono::milliseconds>(window_).count();
  std::vector<std::string> ended;
  {
    std::lock_guard lock(mutex_);
    // Commits finish in order, so by_age_ is oldest first but for a few milliseconds at most: an entry behind a
    // slightly younger one waits for the next sweep.
    while (!by_age_.empty() && by_age_.front().at < oldest) {
      auto key = std::move(by_age_.front().key);
      by_age_.pop_front();
      if (auto it = replaced_.find(key); it != replaced_.end()) {
        if (--it->second == 0) replaced_.erase(it);
        continue;  // the record stored under this key now is a newer one, with an entry of its own
      }
      ended.push_back(std::move(key));
    }
  }
  // Left alone: a call repeating an ended key in the moment between this and its erase's commit writes a record
  // the erase then takes (it would run once more on a later repeat). It needs a key reused a window after its
  // first use, at the very moment of a sweep.
  std::size_t n = ended.size();
  if (n > 0) db_.erase_gradually(std::string(database), std::move(ended));
  return n;
}

}  // namespace xconn

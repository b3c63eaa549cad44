#include "core/channels/tool_calls.hpp"

#include "core/base/crypto.hpp"
#include "core/base/ids.hpp"

#include <boost/json.hpp>

#include <optional>

namespace xconn {
namespace json = boost::json;

namespace {

std::string to_record(const tool_outcome& o) {
  json::object r{{"at", unix_ms()}, {"ok", o.ok}};
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
  {
    std::lock_guard lock(mutex_);
    if (auto it = running_.find(key); it != running_.end()) {
      it->second.push_back(std::move(done));
      return;
    }
    if (auto record = db_.get(database, key)) replay = from_record(*record, oldest);
    if (!replay) running_[key].push_back(std::move(done));
  }
  if (replay) return done(std::move(*replay));  // outside the lock: done may start another call
  run([this, key](tool_outcome outcome, bool keep) {
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
    write_batch batch;
    batch.put(std::string(database), key, to_record(outcome));
    // Even a failed commit answers: the tool ran, and xAgent must hear how; only the replay is lost.
    db_.write(std::move(batch), answer_all);
  });
}

std::size_t tool_calls::sweep(std::size_t limit) {
  long long oldest = unix_ms() - std::chrono::duration_cast<std::chrono::milliseconds>(window_).count();
  write_batch batch;
  if (limit == 0) return 0;
  db_.scan(database, "", [&](std::string_view key, std::string_view value) {
    if (!from_record(value, oldest)) batch.erase(std::string(database), std::string(key));
    return batch.ops.size() < limit;
  });
  std::size_t n = batch.ops.size();
  if (n > 0) db_.write(std::move(batch));
  return n;
}

}  // namespace xconn

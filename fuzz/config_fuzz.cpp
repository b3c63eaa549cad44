// The configuration loader (parse_config in core/base/config.cpp) fed YAML text. Checked beyond not crashing and
// not throwing: a refused text names a reason and a line that exists; an accepted one has every numeric key
// within its documented bounds (the table at the top of config.cpp), valid listen/allow/api_keys values, and
// connector sections whose JSON reads back.
#include "core/base/config.hpp"
#include "fuzz/fuzz_check.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

namespace {

using namespace xconn;

template <class T>
bool within(T v, long long lo, long long hi) {
  return static_cast<long long>(v) >= lo && static_cast<long long>(v) <= hi;
}

bool valid_id(const std::string& id) {
  return !id.empty() && id.size() <= 32 &&
         std::all_of(id.begin(), id.end(), [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; });
}

void check_bounds(const config& c) {
  const auto& s = c.server;
  FUZZ_CHECK(within(s.io_threads, 0, 256) && within(s.heartbeat_s, 1, 3600) && within(s.hello_timeout_s, 1, 3600));
  FUZZ_CHECK(within(s.max_frame_bytes, 1024, 67108864) && within(s.max_outbox_bytes, 65536, 1073741824));
  FUZZ_CHECK(s.listen.find(':') != std::string::npos);
  for (const auto& k : s.api_keys) {
    FUZZ_CHECK(k.size() >= 16);
    FUZZ_CHECK(std::none_of(k.begin(), k.end(), [](char ch) { return static_cast<unsigned char>(ch) <= 0x20 || ch == 0x7f; }));
  }
  FUZZ_CHECK(within(c.store.map_size_bytes, 1048576, 1099511627776ll) && !c.store.path.empty());
  const auto& p = c.plugins;
  FUZZ_CHECK(p.allow.size() <= 16 && std::all_of(p.allow.begin(), p.allow.end(), valid_id));
  FUZZ_CHECK(within(p.threads, 1, 64) && within(p.reload_pause_max_calls, 0, 1000000) &&
             within(p.reload_pause_max_s, 1, 600) && within(p.kv_quota_bytes, 65536, 1073741824) &&
             within(p.inline_budget_us, 0, 100000));
  FUZZ_CHECK(within(c.leases.connector_offline_s, 1, 2592000) && within(c.leases.unauthenticated_channel_s, 1, 86400));
  const auto& d = c.delivery;
  FUZZ_CHECK(within(d.window, 1, 1024) && within(d.ack_timeout_s, 1, 3600) && within(d.retry_max_s, 1, 86400) &&
             d.retry_max_s >= d.ack_timeout_s && within(d.send_timeout_s, 1, 3600) && within(d.expiry_s, 1, 2592000) &&
             within(d.max_pending_per_channel, 1, 1000000) && within(d.delta_ttl_s, 1, 86400) &&
             within(d.max_open_deltas_per_channel, 1, 4096) && within(d.completed_ids_s, 1, 2592000));
  FUZZ_CHECK(within(c.tools.timeout_s, 1, 3600) && within(c.tools.idempotency_s, 1, 2592000));
  FUZZ_CHECK(within(c.files.max_bytes, 1, 1099511627776ll) && within(c.files.ttl_s, 1, 31536000) &&
             within(c.files.url_ttl_s, 1, 2592000));
  for (const auto& [id, section] : c.connectors) {
    FUZZ_CHECK(valid_id(id));
    FUZZ_CHECK(boost::json::parse(section.to_json()).is_object());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto r = parse_config(text, "fuzz.yaml");
  if (!r) {
    FUZZ_CHECK(!r.error().message.empty());
    const auto lines = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
    FUZZ_CHECK(r.error().line >= 0 && r.error().line <= lines);
    return 0;
  }
  check_bounds(*r);
  return 0;
}

// The plugin's key-value calls into the host (plugin.h xconn_host_kv_*, xconn_host_emit_with): C arguments in,
// plugin_kv out. A plugin's callback runs on the plugin pool, like every other answer to plugin code.
#include "core/plugin_host/plugin_generation.hpp"

#include <boost/asio/post.hpp>

#include <cstring>

namespace xconn {
namespace {

std::string_view kv_view(xconn_str s) { return s.data ? std::string_view(s.data, s.size) : std::string_view(); }

// Reads count ops with the caller's stride (ops[0].struct_size), so a newer header's larger op still reads. Returns
// false when the array cannot be read.
bool read_ops(const xconn_kv_op* ops, size_t count, std::vector<kv_op>& out) {
  if (count == 0) return true;
  if (!ops || ops[0].struct_size < sizeof(xconn_kv_op) || count > plugin_kv::max_ops_per_write) return false;
  const auto stride = ops[0].struct_size;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    const auto& op = *reinterpret_cast<const xconn_kv_op*>(reinterpret_cast<const char*>(ops) + i * stride);
    if (!op.key.data || (!op.erase && !op.value.data && op.value.size)) return false;
    out.push_back({op.erase != 0, std::string(kv_view(op.key)), op.erase ? std::string() : std::string(kv_view(op.value))});
  }
  return true;
}

}  // namespace

int64_t plugin_generation::on_host_kv_get(void* ctx, xconn_str key, void* buffer, size_t capacity) {
  auto* self = static_cast<plugin_generation*>(ctx);
  if (!self->hooks_.kv || !key.data || key.size == 0 || key.size > plugin_kv::max_key_bytes || (!buffer && capacity))
    return -2;
  auto value = self->hooks_.kv->get(self->id(), kv_view(key));
  if (!value) return -1;
  if (capacity) std::memcpy(buffer, value->data(), std::min(capacity, value->size()));
  return static_cast<int64_t>(value->size());
}

size_t plugin_generation::on_host_kv_scan(void* ctx, xconn_str prefix, xconn_kv_visit visit, void* user) {
  auto* self = static_cast<plugin_generation*>(ctx);
  if (!self->hooks_.kv || !visit) return 0;
  return self->hooks_.kv->scan(self->id(), kv_view(prefix), [&](std::string_view key, std::string_view value) {
    return visit(user, {key.data(), key.size()}, {value.data(), value.size()}) != 0;
  });
}

void plugin_generation::on_host_kv_write(void* ctx, const xconn_kv_op* ops, size_t count, xconn_kv_done done,
                                         void* user) {
  auto self = static_cast<plugin_generation*>(ctx)->shared_from_this();
  auto answer = [self, done, user](std::optional<kv_error> e) {
    if (!done) return;
    boost::asio::post(self->pool_, [done, user, e = std::move(e), self] {
      if (!e) return done(user, XCONN_STATUS_OK, {"", 0}, {"", 0});
      done(user, XCONN_STATUS_ERROR, {e->code.data(), e->code.size()}, {e->message.data(), e->message.size()});
    });
  };
  std::vector<kv_op> parsed;
  if (!self->hooks_.kv) return answer(kv_error{"kv_unavailable", "this host keeps no plugin state"});
  if (!read_ops(ops, count, parsed)) return answer(kv_error{"invalid_argument", "the ops cannot be read"});
  self->touch();
  self->hooks_.kv->write(self->id(), parsed, std::move(answer));
}

void plugin_generation::on_host_emit_with(void* ctx, xconn_str channel_id, xconn_str message_json,
                                          const xconn_kv_op* ops, size_t count, xconn_emit_done done, void* user) {
  auto* self = static_cast<plugin_generation*>(ctx);
  std::vector<kv_op> state;
  if (!read_ops(ops, count, state)) {
    return boost::asio::post(self->pool_, [self = self->shared_from_this(), done, user] {
      constexpr std::string_view code = "invalid_argument", why = "the ops cannot be read";
      xconn_emit_result r{sizeof(xconn_emit_result), XCONN_STATUS_ERROR, {"", 0}, 0, {code.data(), code.size()},
                          {why.data(), why.size()}};
      done(user, &r);
    });
  }
  self->emit(channel_id, message_json, std::move(state), done, user);
}

}  // namespace xconn

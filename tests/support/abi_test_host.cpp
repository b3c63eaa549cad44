#include "support/abi_test_host.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <memory>
#include <thread>

namespace xconn::test {

void test_host::release(std::size_t n, unsigned threads) {
  std::vector<pending> batch;
  {
    std::lock_guard lock(mutex_);
    if (n == 0 || n > held_.size()) n = held_.size();
    auto end = held_.begin() + static_cast<std::ptrdiff_t>(n);
    batch.assign(std::make_move_iterator(held_.begin()), std::make_move_iterator(end));
    held_.erase(held_.begin(), end);
  }
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < threads; ++t) {
    workers.emplace_back([&batch, t, threads] {
      for (std::size_t i = t; i < batch.size(); i += threads) answer(batch[i]);
    });
  }
  for (auto& worker : workers) worker.join();
}

bool test_host::valid_consumer_key(std::string_view key) {
  if (key.empty() || key.size() > 128) return false;
  for (char c : key) {
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

void test_host::answer(const pending& p) {
  xconn_emit_result r{sizeof(xconn_emit_result),
                      p.answer.ok ? XCONN_STATUS_OK : XCONN_STATUS_ERROR,
                      c_str(p.answer.message_id),
                      p.answer.duplicate ? 1 : 0,
                      c_str(p.answer.code),
                      c_str(p.answer.message)};
  p.done(p.user, &r);
}

void test_host::log(void* ctx, xconn_log_level level, xconn_str text) {
  auto* self = static_cast<test_host*>(ctx);
  std::lock_guard lock(self->mutex_);
  self->logs_.emplace_back(level, std::string(view(text)));
}

void test_host::report_health(void* ctx, xconn_health health, xconn_str) {
  auto* self = static_cast<test_host*>(ctx);
  std::lock_guard lock(self->mutex_);
  self->health_.push_back(health);
}

void test_host::complete(xconn_call* c, xconn_status status, xconn_str result) {
  auto* call = reinterpret_cast<test_call*>(c);
  std::lock_guard lock(call->host->mutex_);
  if (call->completions++ == 0) {
    call->status = status;
    call->json.assign(view(result));
  }
  call->host->completed_.notify_all();
}

int64_t test_host::kv_get(void* ctx, xconn_str key, void* buffer, size_t capacity) {
  auto* self = static_cast<test_host*>(ctx);
  std::lock_guard lock(self->mutex_);
  auto it = self->kv_.find(std::string(view(key)));
  if (it == self->kv_.end()) return -1;
  std::memcpy(buffer, it->second.data(), std::min(capacity, it->second.size()));
  return static_cast<int64_t>(it->second.size());
}

size_t test_host::kv_scan(void* ctx, xconn_str prefix, xconn_kv_visit visit, void* user) {
  auto* self = static_cast<test_host*>(ctx);
  std::map<std::string, std::string> copy;
  {
    std::lock_guard lock(self->mutex_);
    copy = self->kv_;
  }
  size_t visited = 0;
  for (const auto& [key, value] : copy) {
    if (!key.starts_with(view(prefix))) continue;
    ++visited;
    if (!visit(user, {key.data(), key.size()}, {value.data(), value.size()})) break;
  }
  return visited;
}

void test_host::apply_kv(const xconn_kv_op* ops, size_t count) {
  std::lock_guard lock(mutex_);
  const auto* at = reinterpret_cast<const char*>(ops);
  for (size_t i = 0; i < count; ++i, at += ops[0].struct_size) {
    const auto* op = reinterpret_cast<const xconn_kv_op*>(at);
    if (op->erase)
      kv_.erase(std::string(view(op->key)));
    else
      kv_[std::string(view(op->key))] = std::string(view(op->value));
  }
}

void test_host::kv_write(void* ctx, const xconn_kv_op* ops, size_t count, xconn_kv_done done, void* user) {
  static_cast<test_host*>(ctx)->apply_kv(ops, count);
  if (done) done(user, XCONN_STATUS_OK, {}, {});
}

void test_host::emit_with(void* ctx, xconn_str channel, xconn_str message, const xconn_kv_op* ops, size_t count,
                          xconn_emit_done done, void* user) {
  static_cast<test_host*>(ctx)->apply_kv(ops, count);
  emit(ctx, channel, message, done, user);
}

void test_host::emit(void* ctx, xconn_str channel, xconn_str message, xconn_emit_done done, void* user) {
  auto* self = static_cast<test_host*>(ctx);
  pending p{done, user, {}};
  {
    std::lock_guard lock(self->mutex_);
    std::size_t index = self->emits_.size();
    self->emits_.push_back({std::string(view(channel)), boost::json::parse(view(message)).as_object()});
    p.answer = self->policy_ ? self->policy_(index) : accepted("msg_" + std::to_string(index + 1));
    if (self->mode_ == emit_mode::held) {
      self->held_.push_back(std::move(p));
      return;
    }
  }
  answer(p);  // unlocked: the plugin may complete a call from inside its callback
}

int test_host::consumer_acquire(void* ctx, xconn_str channel, xconn_str key) {
  auto* self = static_cast<test_host*>(ctx);
  std::lock_guard lock(self->mutex_);
  consumer_call call{true, std::string(view(channel)), std::string(view(key)), -1};
  if (!call.channel.empty() && valid_consumer_key(call.key)) {
    auto& holders = self->consumer_holders_[call.key];
    holders.insert(call.channel);
    call.answer = static_cast<int>(holders.size());
  }
  self->consumer_calls_.push_back(std::move(call));
  return self->consumer_calls_.back().answer;
}

xconn_file_upload* test_host::file_begin(void* ctx, xconn_str channel, xconn_str filename, xconn_str mime) {
  auto* self = static_cast<test_host*>(ctx);
  if (view(channel).empty()) return nullptr;
  auto* upload = new test_upload{self, {std::string(view(channel)), std::string(view(filename)),
                                        std::string(view(mime)), {}}};
  return reinterpret_cast<xconn_file_upload*>(upload);
}

int test_host::file_write(xconn_file_upload* handle, const void* data, size_t size) {
  reinterpret_cast<test_upload*>(handle)->file.bytes.append(static_cast<const char*>(data), size);
  return 0;
}

void test_host::file_end(xconn_file_upload* handle, int keep, xconn_file_done done, void* user) {
  std::unique_ptr<test_upload> upload(reinterpret_cast<test_upload*>(handle));
  std::string item, code = keep ? "" : "discarded";
  if (keep) {
    std::lock_guard lock(upload->host->mutex_);
    auto& fail_in = upload->host->fail_keep_in_;
    if (fail_in > 0 && --fail_in == 0) code = "store_failed";
  }
  if (keep && code.empty()) {
    std::lock_guard lock(upload->host->mutex_);
    char ref[38];
    std::snprintf(ref, sizeof ref, "file_%032zx", ++upload->host->files_kept_);
    item = boost::json::serialize(boost::json::object{{"file_ref", ref}, {"type", "file"},
                                                      {"filename", upload->file.filename},
                                                      {"mime_type", upload->file.mime_type},
                                                      {"byte_size", upload->file.bytes.size()}});
    upload->host->files_[ref] = std::move(upload->file);
  }
  xconn_file_result r{sizeof(xconn_file_result), code.empty() ? XCONN_STATUS_OK : XCONN_STATUS_ERROR,
                      {item.data(), item.size()}, {code.data(), code.size()}, {code.data(), code.size()}};
  done(user, &r);
}

int64_t test_host::file_read(void* ctx, xconn_str channel, xconn_str file_ref, uint64_t offset, void* buffer,
                             size_t capacity) {
  auto* self = static_cast<test_host*>(ctx);
  std::lock_guard lock(self->mutex_);
  auto it = self->files_.find(std::string(view(file_ref)));
  if (it == self->files_.end() || it->second.channel != view(channel)) return -1;
  const auto& bytes = it->second.bytes;
  if (offset >= bytes.size()) return 0;
  auto n = std::min<std::size_t>(capacity, bytes.size() - offset);
  std::memcpy(buffer, bytes.data() + offset, n);
  return static_cast<int64_t>(n);
}

int test_host::file_delete(void* ctx, xconn_str channel, xconn_str file_ref) {
  auto* self = static_cast<test_host*>(ctx);
  std::lock_guard lock(self->mutex_);
  auto it = self->files_.find(std::string(view(file_ref)));
  int answer = -1;
  if (it != self->files_.end() && it->second.channel == view(channel)) {
    self->files_.erase(it);
    answer = 0;
  }
  self->file_deletes_.push_back({std::string(view(channel)), std::string(view(file_ref)), answer});
  return answer;
}

void test_host::consumer_release(void* ctx, xconn_str channel, xconn_str key) {
  auto* self = static_cast<test_host*>(ctx);
  std::lock_guard lock(self->mutex_);
  consumer_call call{false, std::string(view(channel)), std::string(view(key)), -1};
  auto it = self->consumer_holders_.find(call.key);
  if (it != self->consumer_holders_.end() && it->second.erase(call.channel) > 0) {
    call.answer = static_cast<int>(it->second.size());
    if (it->second.empty()) {
      self->consumers_at_zero_.push_back(call.key);
      self->consumer_holders_.erase(it);
    }
  }
  self->consumer_calls_.push_back(std::move(call));
}

}  // namespace xconn::test

#include "core/files/file_store.hpp"

#include <spdlog/spdlog.h>

#include <boost/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <set>

namespace xconn {
namespace json = boost::json;

namespace {

std::string chunk_key(std::string_view file_ref, std::uint64_t index) {
  char digits[17];
  std::snprintf(digits, sizeof digits, "%016llx", static_cast<unsigned long long>(index));
  std::string key(file_ref);
  key.push_back('/');
  key.append(digits);
  return key;
}

std::string by_channel_key(std::string_view channel_id, std::string_view file_ref) {
  std::string key(channel_id);
  key.push_back('/');
  key.append(file_ref);
  return key;
}

std::uint64_t chunk_count(std::uint64_t bytes) { return (bytes + file_store::chunk_bytes - 1) / file_store::chunk_bytes; }

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

std::string stored_file::type() const {
  auto major = mime_type.substr(0, mime_type.find('/'));
  if (major == "image" || major == "video" || major == "audio") return major;
  return "file";
}

json::object stored_file::item() const {
  return {{"type", type()},           {"file_ref", file_ref},   {"filename", filename},
          {"mime_type", mime_type},   {"byte_size", byte_size}, {"expires_at", expires_at}};
}

std::string stored_file::to_record() const {
  return json::serialize(json::object{{"plugin_id", plugin_id},   {"channel_id", channel_id}, {"filename", filename},
                                      {"mime_type", mime_type},   {"sha256", sha256},         {"byte_size", byte_size},
                                      {"created_at", created_at}, {"expires_at", expires_at}, {"complete", complete}});
}

std::optional<stored_file> stored_file::from_record(std::string_view file_ref, std::string_view text) {
  boost::system::error_code ec;
  auto v = json::parse(text, ec);
  if (ec || !v.is_object()) return std::nullopt;
  const auto& o = v.as_object();
  try {
    stored_file f;
    f.file_ref = file_ref;
    f.plugin_id = o.at("plugin_id").as_string();
    f.channel_id = o.at("channel_id").as_string();
    f.filename = o.at("filename").as_string();
    f.mime_type = o.at("mime_type").as_string();
    f.sha256 = o.at("sha256").as_string();
    f.byte_size = o.at("byte_size").to_number<std::uint64_t>();
    f.created_at = o.at("created_at").to_number<long long>();
    f.expires_at = o.at("expires_at").to_number<long long>();
    f.complete = o.at("complete").as_bool();
    return f;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

bool valid_file_ref(std::string_view ref) {
  if (ref.size() != 37 || ref.substr(0, 5) != "file_") return false;
  return std::all_of(ref.begin() + 5, ref.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::string clean_filename(std::string_view name) {
  auto slash = name.find_last_of("/\\");
  if (slash != std::string_view::npos) name.remove_prefix(slash + 1);
  std::string out;
  for (char c : name)
    if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) out.push_back(c);
  if (out.size() > 255) {
    out.resize(255);
    // Never cut a UTF-8 sequence in half: drop the last character only when the cut left it short.
    std::size_t lead = out.size();
    while (lead > 0 && out.size() - lead < 4 && (static_cast<unsigned char>(out[lead - 1]) & 0xC0) == 0x80) --lead;
    if (lead > 0) {
      auto first = static_cast<unsigned char>(out[lead - 1]);
      std::size_t needs = first >= 0xF0 ? 4 : first >= 0xE0 ? 3 : first >= 0xC0 ? 2 : 1;
      if (out.size() - (lead - 1) < needs) out.resize(lead - 1);
    }
  }
  if (out == "." || out == "..") out.clear();
  return out.empty() ? "file" : out;
}

std::string clean_mime_type(std::string_view type) {
  while (!type.empty() && type.front() == ' ') type.remove_prefix(1);
  while (!type.empty() && type.back() == ' ') type.remove_suffix(1);
  if (type.size() > 255 || type.find('/') == std::string_view::npos) return {};
  for (unsigned char c : type)
    if (c < 0x20 || c >= 0x7f) return {};
  return std::string(type);
}

std::string mime_type_for(std::string_view filename) {
  static const std::pair<std::string_view, std::string_view> known[] = {
      {"png", "image/png"},        {"jpg", "image/jpeg"},        {"jpeg", "image/jpeg"},     {"gif", "image/gif"},
      {"webp", "image/webp"},      {"svg", "image/svg+xml"},     {"bmp", "image/bmp"},       {"mp4", "video/mp4"},
      {"webm", "video/webm"},      {"mov", "video/quicktime"},   {"mp3", "audio/mpeg"},      {"ogg", "audio/ogg"},
      {"wav", "audio/wav"},        {"m4a", "audio/mp4"},         {"pdf", "application/pdf"}, {"txt", "text/plain"},
      {"md", "text/markdown"},     {"csv", "text/csv"},          {"html", "text/html"},      {"json", "application/json"},
      {"zip", "application/zip"},  {"gz", "application/gzip"},   {"xml", "application/xml"}};
  auto dot = filename.rfind('.');
  if (dot != std::string_view::npos) {
    auto ext = lower(filename.substr(dot + 1));
    for (const auto& [e, type] : known)
      if (e == ext) return std::string(type);
  }
  return "application/octet-stream";
}

file_store::file_store(store& db, const files_config& cfg, now_fn now) : db_(db), cfg_(cfg), now_(std::move(now)) {}

std::size_t file_store::load() {
  std::set<std::string, std::less<>> kept;
  std::vector<stored_file> interrupted;
  db_.scan(files_db, "", [&](std::string_view key, std::string_view value) {
    auto f = stored_file::from_record(key, value);
    if (f && f->complete)
      kept.emplace(key);
    else if (f)
      interrupted.push_back(*f);
    else
      interrupted.emplace_back().file_ref = key;
    return true;
  });
  write_batch batch;
  for (const auto& f : interrupted) batch.erase(std::string(files_db), f.file_ref);
  db_.scan(by_channel_db, "", [&](std::string_view key, std::string_view) {
    if (!kept.count(key.substr(key.find('/') + 1))) batch.erase(std::string(by_channel_db), std::string(key));
    return true;
  });
  // Chunks of interrupted uploads, and of files whose erase a crash cut short, have no complete record.
  std::size_t orphans = 0;
  db_.scan(chunks_db, "", [&](std::string_view key, std::string_view) {
    if (!kept.count(key.substr(0, key.find('/')))) {
      batch.erase(std::string(chunks_db), std::string(key));
      ++orphans;
    }
    return true;
  });
  if (!batch.ops.empty()) {
    if (auto ec = db_.write_sync(std::move(batch)))
      spdlog::warn("files: cannot drop {} interrupted uploads: {}", interrupted.size(), ec.message());
    else
      spdlog::info("files: dropped {} interrupted uploads ({} chunks)", interrupted.size(), orphans);
  }
  return kept.size();
}

std::shared_ptr<file_store::writer> file_store::begin(std::string plugin_id, std::string channel_id,
                                                      std::string_view filename, std::string_view mime_type) {
  stored_file f;
  f.file_ref = "file_" + random_hex(16);
  f.plugin_id = std::move(plugin_id);
  f.channel_id = std::move(channel_id);
  f.filename = clean_filename(filename);
  f.mime_type = clean_mime_type(mime_type);
  if (f.mime_type.empty()) f.mime_type = mime_type_for(f.filename);
  f.created_at = now_();
  f.expires_at = f.created_at + cfg_.ttl_s * 1000LL;
  // The record comes first, marked incomplete: a crash mid-upload leaves something load() recognizes.
  db_.write(write_batch{}
                .put(std::string(files_db), f.file_ref, f.to_record())
                .put(std::string(by_channel_db), by_channel_key(f.channel_id, f.file_ref), ""));
  return std::make_shared<writer>(*this, std::move(f));
}

std::optional<stored_file> file_store::find(std::string_view file_ref) const {
  if (!valid_file_ref(file_ref)) return std::nullopt;
  auto record = db_.get(files_db, file_ref);
  if (!record) return std::nullopt;
  auto f = stored_file::from_record(file_ref, *record);
  if (!f || !f->complete || f->expires_at <= now_()) return std::nullopt;
  return f;
}

std::optional<stored_file> file_store::find_on(std::string_view plugin_id, std::string_view channel_id,
                                              std::string_view file_ref) const {
  auto f = find(file_ref);
  if (!f || f->plugin_id != plugin_id || f->channel_id != channel_id) return std::nullopt;
  return f;
}

std::optional<std::string> file_store::chunk(std::string_view file_ref, std::uint64_t index) const {
  return db_.get(chunks_db, chunk_key(file_ref, index));
}

std::optional<std::size_t> file_store::read(const stored_file& f, std::uint64_t offset, char* out,
                                            std::size_t capacity) const {
  if (offset >= f.byte_size || capacity == 0) return 0;
  auto bytes = chunk(f.file_ref, offset / chunk_bytes);
  if (!bytes) return std::nullopt;
  std::size_t within = offset % chunk_bytes;
  if (within >= bytes->size()) return std::nullopt;
  std::size_t n = std::min(capacity, bytes->size() - within);
  std::memcpy(out, bytes->data() + within, n);
  return n;
}

void file_store::erase_chunks(std::string_view file_ref, std::uint64_t count) {
  std::vector<std::string> keys;
  keys.reserve(count);
  for (std::uint64_t i = 0; i < count; ++i) keys.push_back(chunk_key(file_ref, i));
  db_.erase_gradually(std::string(chunks_db), std::move(keys));
}

void file_store::remove(std::string_view file_ref, std::function<void(remove_outcome)> done) {
  std::optional<stored_file> f;
  if (valid_file_ref(file_ref))
    if (auto record = db_.get(files_db, file_ref)) f = stored_file::from_record(file_ref, *record);
  // An upload still running is its writer's to finish or abort (its record does not know its chunks yet).
  if (!f || !f->complete) {
    if (done) done(remove_outcome::not_found);
    return;
  }
  auto count = chunk_count(f->byte_size);
  db_.write(write_batch{}
                .erase(std::string(files_db), f->file_ref)
                .erase(std::string(by_channel_db), by_channel_key(f->channel_id, f->file_ref)),
            [this, ref = f->file_ref, count, done = std::move(done)](std::error_code ec) mutable {
              if (ec) {
                spdlog::error("files: cannot remove {}: {}", ref, ec.message());
                if (done) done(remove_outcome::store_failed);
                return;
              }
              if (done) done(remove_outcome::removed);
              erase_chunks(ref, count);
            });
}

void file_store::drop_channels(const std::vector<std::string>& channel_ids) {
  std::vector<std::string> refs;
  for (const auto& id : channel_ids)
    db_.scan(by_channel_db, by_channel_key(id, ""), [&](std::string_view key, std::string_view) {
      refs.emplace_back(key.substr(key.find('/') + 1));
      return true;
    });
  for (const auto& ref : refs) remove(ref);
}

std::size_t file_store::collect() {
  long long t = now_();
  std::vector<std::string> expired;
  db_.scan(files_db, "", [&](std::string_view key, std::string_view value) {
    auto f = stored_file::from_record(key, value);
    if (f && f->complete && f->expires_at <= t) expired.emplace_back(key);
    return true;
  });
  for (const auto& ref : expired) remove(ref);
  if (!expired.empty()) spdlog::info("files: {} expired files removed", expired.size());
  return expired.size();
}

void file_store::start(boost::asio::io_context& io) {
  collector_ = std::make_unique<boost::asio::steady_timer>(io);
  schedule();
}

void file_store::stop() {
  if (collector_) collector_->cancel();
}

void file_store::schedule() {
  collector_->expires_after(std::chrono::seconds(std::clamp(cfg_.ttl_s, 1, 60)));
  collector_->async_wait([this](boost::system::error_code ec) {
    if (ec) return;
    collect();
    schedule();
  });
}

file_store::writer::writer(file_store& files, stored_file meta) : files_(files), meta_(std::move(meta)) {}

file_store::writer::~writer() {
  if (!ended_) abort();
}

bool file_store::writer::append(std::string_view bytes) {
  if (ended_ || too_large_) return false;
  {
    std::lock_guard lock(mutex_);
    if (failed_) return false;
  }
  if (meta_.byte_size + bytes.size() > files_.cfg_.max_bytes) {
    too_large_ = true;
    return false;
  }
  meta_.byte_size += bytes.size();
  digest_.update(bytes);
  while (!bytes.empty()) {
    auto take = std::min(bytes.size(), chunk_bytes - pending_.size());
    pending_.append(bytes.substr(0, take));
    bytes.remove_prefix(take);
    if (pending_.size() == chunk_bytes) {
      store_chunk(std::move(pending_));
      pending_.clear();
      pending_.reserve(chunk_bytes);
    }
  }
  return true;
}

bool file_store::writer::backlogged() const {
  std::lock_guard lock(mutex_);
  return queued_ > max_chunks_queued;
}

void file_store::writer::when_drained(std::function<void()> resume) {
  {
    std::lock_guard lock(mutex_);
    if (queued_ > max_chunks_queued / 2) {
      resume_ = std::move(resume);
      return;
    }
  }
  resume();
}

void file_store::writer::store_chunk(std::string bytes) {
  {
    std::lock_guard lock(mutex_);
    ++queued_;
  }
  files_.db_.write(write_batch{}.put(std::string(chunks_db), chunk_key(meta_.file_ref, chunks_++), std::move(bytes)),
                   [self = shared_from_this()](std::error_code ec) { self->on_stored(ec); });
}

void file_store::writer::on_stored(std::error_code ec) {
  std::function<void()> resume;
  bool first_failure = false;
  {
    std::lock_guard lock(mutex_);
    --queued_;
    first_failure = ec && !failed_;
    if (ec) failed_ = true;
    if (resume_ && (queued_ <= max_chunks_queued / 2 || failed_)) resume = std::exchange(resume_, {});
  }
  if (first_failure) spdlog::error("files: cannot store {} (upload refused): {}", meta_.file_ref, ec.message());
  if (resume) resume();
}

namespace {
boost::system::result<stored_file, std::string> not_stored(std::string why) {
  return {boost::system::in_place_error, std::move(why)};
}
}  // namespace

void file_store::writer::finish(file_done done) {
  if (ended_) return done(not_stored("already_finished"));
  if (too_large_) {
    abort();
    return done(not_stored("payload_too_large"));
  }
  if (!pending_.empty()) store_chunk(std::move(pending_));
  ended_ = true;
  meta_.sha256 = digest_.final_hex();
  meta_.complete = true;
  // The store commits in queue order, so every chunk's outcome is known when the record's is.
  files_.db_.write(write_batch{}.put(std::string(files_db), meta_.file_ref, meta_.to_record()),
                   [self = shared_from_this(), done = std::move(done)](std::error_code ec) {
                     bool chunk_failed;
                     {
                       std::lock_guard lock(self->mutex_);
                       chunk_failed = self->failed_;
                     }
                     if (!ec && !chunk_failed) return done(self->meta_);
                     spdlog::error("files: cannot store {}: {}", self->meta_.file_ref,
                                   ec ? ec.message() : "a chunk failed to store");
                     self->files_.remove(self->meta_.file_ref);
                     done(not_stored("store_failed"));
                   });
}

void file_store::writer::abort() {
  if (ended_) return;
  ended_ = true;
  auto count = chunks_;
  // Queued after every chunk write of this file, so nothing written survives.
  files_.db_.write(write_batch{}
                       .erase(std::string(files_db), meta_.file_ref)
                       .erase(std::string(by_channel_db), by_channel_key(meta_.channel_id, meta_.file_ref)));
  files_.erase_chunks(meta_.file_ref, count);
}

}  // namespace xconn

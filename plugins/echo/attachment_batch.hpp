// An inject's attachments, stored all or none. Every attachment is written whole first and kept only once all of
// them were: one that fails (over files.max_bytes, a store failure) discards those before it instead of leaving
// them, named by no message, for files.ttl_s. A keep that fails after earlier ones were kept deletes those (ABI 1.5
// xconn_host_file_delete; an older host keeps them until files.ttl_s).
#pragma once

#include "echo_values.hpp"

#include <xconn/plugin.hpp>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace echo {

struct attachment {
  std::string filename;
  std::string mime_type;
  std::string bytes;
};

class attachment_batch {
 public:
  // The IM file items ({"file_ref", ...} as JSON text) in the attachments' order, or the first failure.
  using done_fn = std::function<void(std::optional<xconn::sdk::error>, std::vector<std::string>)>;

  // done runs once, on a host pool thread or before this returns. Writes may wait for the store: call it from a
  // plugin call's own thread, as put_file.
  static void store(const xconn::sdk::host& host, std::string_view channel, const std::vector<attachment>& files,
                    done_fn done) {
    if (!host.has_files()) return done(xconn::sdk::error{"files_unsupported", "this host has no file store", false}, {});
    const xconn_host_api* api = host.c_api();
    auto kept = std::make_shared<keeping>(keeping{api, std::string(channel), {}, 0, {}, std::move(done)});
    for (const auto& f : files) {
      auto* upload = api->xconn_host_file_begin(api->host_ctx, xconn::sdk::to_c(channel),
                                                xconn::sdk::to_c(f.filename), xconn::sdk::to_c(f.mime_type));
      if (!upload) {
        discard(api, kept->uploads, 0);
        return kept->done(xconn::sdk::error{"channel_not_found", "no such channel of this plugin", false}, {});
      }
      if (!write_whole(api, upload, f.bytes)) {
        discard(api, kept->uploads, 0);
        // A failed write keeps nothing; its end says why (over files.max_bytes, the store).
        return end(api, upload, true, [kept](bool ok, std::string, xconn::sdk::error why) {
          kept->done(ok ? xconn::sdk::error{"store_failed", "the file could not be stored", false} : std::move(why), {});
        });
      }
      kept->uploads.push_back(upload);
    }
    keep_next(kept);
  }

  // Deletes kept files of the channel that no message names (their emit was a duplicate, or a later attachment
  // failed); a ref the host no longer holds is only logged. Waits for the store: a plugin call's thread or a host
  // pool thread, as put_file.
  static void delete_kept(const xconn::sdk::host& host, std::string_view channel, const std::vector<std::string>& refs) {
#if XCONN_PLUGIN_API_MINOR >= 5  // echo is also built against older headers (a test fixture): no such call there
    for (const auto& ref : refs) {
      int rc = host.delete_file(channel, ref);
      if (rc != 0 && host.can_delete_files())
        host.warn("echo could not delete " + ref + " of channel " + std::string(channel) + ": " +
                  (rc == -2 ? "the store failed; it expires after files.ttl_s" : "the host holds no such file"));
    }
#else
    (void)host, (void)channel, (void)refs;
#endif
  }

  // The file_ref of each IM file item (JSON text); an item without one is skipped.
  static std::vector<std::string> refs_of(const std::vector<std::string>& items) {
    std::vector<std::string> refs;
    for (const auto& item_json : items) {
      auto item = parse_object(item_json);
      if (const json::string* ref = item ? string_at(*item, "file_ref") : nullptr) refs.emplace_back(*ref);
    }
    return refs;
  }

 private:
  struct keeping {
    const xconn_host_api* api;
    std::string channel;
    std::vector<xconn_file_upload*> uploads;  // written whole, not ended yet from next on
    std::size_t next;
    std::vector<std::string> items;
    done_fn done;
  };
  using ended_fn = std::function<void(bool ok, std::string file_json, xconn::sdk::error why)>;

  static bool write_whole(const xconn_host_api* api, xconn_file_upload* upload, std::string_view bytes) {
    constexpr std::size_t piece = 64 * 1024;
    for (std::size_t at = 0; at < bytes.size(); at += piece) {
      auto n = std::min(piece, bytes.size() - at);
      if (api->xconn_host_file_write(upload, bytes.data() + at, n) != 0) return false;
    }
    return true;
  }

  // One after another, so that a store failure on one still discards the ones after it and deletes those before.
  static void keep_next(const std::shared_ptr<keeping>& k) {
    if (k->next == k->uploads.size()) return k->done(std::nullopt, std::move(k->items));
    auto* upload = k->uploads[k->next++];
    end(k->api, upload, true, [k](bool ok, std::string file_json, xconn::sdk::error why) {
      if (!ok) {
        discard(k->api, k->uploads, k->next);
        delete_kept(xconn::sdk::host(k->api), k->channel, refs_of(k->items));
        return k->done(std::move(why), {});
      }
      k->items.push_back(std::move(file_json));
      keep_next(k);
    });
  }

  static void discard(const xconn_host_api* api, const std::vector<xconn_file_upload*>& uploads, std::size_t from) {
    for (std::size_t i = from; i < uploads.size(); ++i)
      api->xconn_host_file_end(uploads[i], 0, [](void*, const xconn_file_result*) {}, nullptr);
  }

  static void end(const xconn_host_api* api, xconn_file_upload* upload, bool keep, ended_fn then) {
    auto* user = new ended_fn(std::move(then));
    api->xconn_host_file_end(upload, keep ? 1 : 0, &ended, user);
  }
  static void ended(void* user, const xconn_file_result* r) {
    std::unique_ptr<ended_fn> then(static_cast<ended_fn*>(user));
    bool ok = r->status == XCONN_STATUS_OK;
    xconn::sdk::error why;
    if (!ok) why = {std::string(xconn::sdk::from_c(r->code)), std::string(xconn::sdk::from_c(r->message)), false};
    try {
      (*then)(ok, std::string(xconn::sdk::from_c(r->file_json)), std::move(why));
    } catch (...) {  // nothing may unwind into the host
    }
  }
};

}  // namespace echo

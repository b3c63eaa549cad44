// The host's file store as an adapter's media go through it: a channel's file (an attachment the agent sends, named
// by file_ref) read whole under a byte cap with its stored name and type, and the file_ref of a downloaded file the
// adapter stored (network_adapter::put_file). Any thread; reads are answered at once by the host.
#pragma once

#include <xconn/plugin.hpp>

#include <boost/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace xconn::adapter {

struct channel_file {
  std::string bytes;
  std::string filename;   // "" when neither the caller nor the host named it (an older host): the adapter names it
  std::string mime_type;  // likewise
};

// The file of channel named file_ref, read whole; nullopt when it is not one of the channel's or is past max_bytes.
// filename and mime_type: what the caller knows already (a final's file item), else what the host stored.
inline std::optional<channel_file> read_channel_file(const xconn::sdk::host& host, std::string_view channel,
                                                     std::string_view file_ref, std::size_t max_bytes,
                                                     std::string filename = {}, std::string mime_type = {}) {
  channel_file file{{}, std::move(filename), std::move(mime_type)};
  char buffer[64 * 1024];
  for (;;) {
    auto n = host.read_file(channel, file_ref, file.bytes.size(), buffer, sizeof buffer);
    if (n < 0) return std::nullopt;
    if (n == 0) break;
    file.bytes.append(buffer, static_cast<std::size_t>(n));
    if (file.bytes.size() > max_bytes) return std::nullopt;
  }
  if (file.filename.empty() || file.mime_type.empty()) {
    if (auto stored = host.describe_file(channel, file_ref)) {
      if (file.filename.empty()) file.filename = stored->filename;
      if (file.mime_type.empty()) file.mime_type = stored->mime_type;
    }
  }
  return file;
}

// The file_ref of a stored file (put_file's answer), for the message's "files"; "" when the store refused it.
inline std::string stored_file_ref(const xconn::sdk::file_result& stored) {
  if (!stored.ok) return {};
  boost::system::error_code ec;
  auto item = boost::json::parse(stored.file_json, ec);
  if (ec || !item.is_object()) return {};
  auto* ref = item.as_object().if_contains("file_ref");
  return ref && ref->is_string() ? std::string(ref->as_string()) : std::string();
}

}  // namespace xconn::adapter

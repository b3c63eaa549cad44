#include "core/channels/channel_credentials.hpp"

#include <spdlog/spdlog.h>

namespace xconn {
namespace {

// What a sealed value is bound to: another plugin's or another channel's record does not open.
std::string owner_of(std::string_view plugin_id, std::string_view channel_id) {
  std::string ad(plugin_id);
  ad.push_back('\n');
  ad.append(channel_id);
  return ad;
}

}  // namespace

void channel_credentials::stage(std::string_view plugin_id, const std::string& channel_id,
                                std::string_view inputs_json, write_batch& batch) const {
  if (inputs_json.empty() || inputs_json == "{}") return stage_erase(channel_id, batch);
  batch.put(std::string(database), channel_id, seal_.seal(inputs_json, owner_of(plugin_id, channel_id)));
}

void channel_credentials::stage_erase(const std::string& channel_id, write_batch& batch) {
  batch.erase(std::string(database), channel_id);
}

std::optional<std::string> channel_credentials::get(std::string_view plugin_id, const std::string& channel_id) const {
  auto sealed = db_.get(database, channel_id);
  if (!sealed) return std::nullopt;
  auto opened = seal_.open(*sealed, owner_of(plugin_id, channel_id));
  if (!opened) spdlog::error("credentials of channel {} do not open (another sealing key?)", channel_id);
  return opened;
}

}  // namespace xconn

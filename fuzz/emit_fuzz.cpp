// The emit reader (parse_emit in core/messaging/emit_message.cpp), fed what a plugin passes to ctx.emit, read
// against the tests' sample plugin. Checked beyond not crashing and not throwing: a refused emit says which field;
// an accepted message keeps every documented limit (text and context sizes, field sizes, at most 16 distinct
// file_refs, a channel key under the plugin's own id, text or voice modality, a self message never triggers), and
// it survives the store's record round trip (to_record / from_record) unchanged.
#include "core/messaging/emit_message.hpp"
#include "fuzz/fuzz_check.hpp"

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

namespace {

using namespace xconn;

void check(const inbound_message& m, const plugin_manifest& manifest) {
  FUZZ_CHECK(m.text.size() <= emit_max_text_bytes && m.context_text.size() <= emit_max_text_bytes);
  FUZZ_CHECK(!m.text.empty() || !m.context_text.empty() || !m.files.empty());
  FUZZ_CHECK(m.channel_key.size() <= emit_max_field_bytes && m.channel_key.starts_with(manifest.id + "/"));
  FUZZ_CHECK(m.sender_id.size() <= emit_max_field_bytes && m.sender_name.size() <= emit_max_field_bytes &&
             m.msg_id.size() <= emit_max_field_bytes);
  FUZZ_CHECK(m.modality.empty() || m.modality == "text" || m.modality == "voice");
  FUZZ_CHECK(m.at >= 0);
  if (m.role == "self") FUZZ_CHECK(!m.trigger);
  FUZZ_CHECK(m.files.size() <= emit_max_files);
  std::set<std::string> refs;
  for (const auto& f : m.files) {
    FUZZ_CHECK(f.is_object());
    auto* ref = f.as_object().if_contains("file_ref");
    FUZZ_CHECK(ref && ref->is_string() && refs.insert(std::string(ref->as_string())).second);
  }

  inbound_message stored = m;  // the host adds its own id before storing
  stored.message_id = "msg_1";
  auto back = inbound_message::from_record(7, stored.to_record());
  FUZZ_CHECK(back.has_value());
  FUZZ_CHECK(back->seq == 7 && back->message_id == "msg_1" && back->msg_id == m.msg_id && back->text == m.text && back->context_text == m.context_text);
  FUZZ_CHECK(back->channel_key == m.channel_key && back->sender_id == m.sender_id && back->sender_name == m.sender_name);
  FUZZ_CHECK(back->role == m.role && back->modality == m.modality && back->at == m.at && back->trigger == m.trigger);
  FUZZ_CHECK(back->files == m.files);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto& manifest = fuzz::sample_plugin();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto r = parse_emit(text, manifest);
  if (!r) {
    FUZZ_CHECK(!r.error().empty() && r.error().find(':') != std::string::npos);
    return 0;
  }
  check(*r, manifest);
  return 0;
}

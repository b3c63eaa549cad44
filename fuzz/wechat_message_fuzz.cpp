// The wechat plugin's protocol helpers (plugins/wechat/), fed what WeChat's servers and CDN send: the bytes as a
// WeixinMessage to inbound_of and media_of, as key and body to aes_ecb_decrypt, as an aes_key to media_key and
// unbase64, and as a final's text to split_text. Checked beyond not crashing: an emit keeps the host's bounds and
// carries nothing private, a key is 16 bytes or none, a decryption encrypts back to its body, a base64 text is
// the one its bytes give, and no part is empty or over its code points.
#include "fuzz/fuzz_check.hpp"
#include "plugins/wechat/ilink_crypto.hpp"
#include "plugins/wechat/ilink_messages.hpp"
#include "plugins/wechat/wechat_text.hpp"

#include <boost/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

void check_media(const std::vector<wechat::media_item>& media) {
  FUZZ_CHECK(media.size() <= wechat::max_media_per_message + 1);  // the quoted message's may be the one
  for (const auto& m : media) {
    FUZZ_CHECK(m.key.empty() || m.key.size() == 16);
    FUZZ_CHECK(!m.bad_key || m.key.empty());
    FUZZ_CHECK(m.kind == "image" || m.kind == "voice" || m.kind == "file" || m.kind == "video");
    FUZZ_CHECK(!m.filename.empty() && m.filename.find('/') == std::string::npos && !m.mime_type.empty());
  }
}

void check_message(std::string_view text) {
  auto message = xconn::kit::parse_object(text);
  if (!message) return;
  check_media(wechat::media_of(*message));
  auto in = wechat::inbound_of(*message, "bot");
  if (!in) return;
  FUZZ_CHECK(!in->from_user.empty());
  const auto& e = in->emit;
  for (const char* field : {"text", "msg_id", "sender_id", "sender_name", "channel_key"})
    FUZZ_CHECK(e.contains(field) && e.at(field).is_string());
  // The host takes no emit without text or files.
  FUZZ_CHECK(e.at("text").as_string().size() <= wechat::max_emit_text_bytes);
  FUZZ_CHECK(!e.at("text").as_string().empty() || !in->media.empty());
  FUZZ_CHECK(e.at("sender_name").as_string().size() <= xconn::kit::emit_field_max_bytes);
  FUZZ_CHECK(std::string_view(e.at("msg_id").as_string()).starts_with("bot:"));
  FUZZ_CHECK(std::string_view(e.at("channel_key").as_string()).starts_with("wechat/"));
  for (const auto& [k, v] : e) {
    std::string_view key = k;
    FUZZ_CHECK(key == "text" || key == "msg_id" || key == "sender_id" || key == "sender_name" ||
               key == "channel_key" || key == "at" || key == "trigger");
  }
  if (auto* at = e.if_contains("at")) FUZZ_CHECK(at->is_int64() && at->as_int64() >= 0 && at->as_int64() <= wechat::max_at_ms);
  if (in->quoted) {
    FUZZ_CHECK(in->quoted->at("trigger") == false);
    FUZZ_CHECK(in->quoted->at("msg_id").as_string() == std::string(e.at("msg_id").as_string()) + ":quoted");
  }
  check_media(in->media);
}

void check_crypto(std::string_view bytes) {
  if (bytes.size() >= 16) {
    auto key = bytes.substr(0, 16), cipher = bytes.substr(16);
    if (auto plain = wechat::aes_ecb_decrypt(key, cipher)) {
      FUZZ_CHECK(plain->size() < cipher.size());
      FUZZ_CHECK(wechat::aes_ecb_encrypt(key, *plain) == cipher);
    }
  }
  if (auto key = wechat::media_key(bytes)) FUZZ_CHECK(key->size() == 16);
  if (auto key = wechat::hex_key(bytes)) FUZZ_CHECK(key->size() == 16);
  if (auto raw = wechat::unbase64(bytes)) FUZZ_CHECK(wechat::base64(*raw) == bytes);
}

void check_split(std::string_view text) {
  const std::size_t max = text.empty() ? 1 : 1 + static_cast<unsigned char>(text[0]) % 64;
  for (const auto& part : wechat::split_text(text, max)) {
    FUZZ_CHECK(!part.empty());
    std::size_t points = 0;
    for (std::size_t at = 0; at < part.size(); ++points) {
      auto n = xconn::kit::utf8_sequence_bytes(part, at);
      at += n == 0 ? 1 : n;
    }
    FUZZ_CHECK(points <= max);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  check_message(bytes);
  check_crypto(bytes);
  check_split(bytes);
  return 0;
}

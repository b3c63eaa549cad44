#include "support/fake_ilink.hpp"

#include "support/fake_process.hpp"
#include "support/files_helpers.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace xconn::test {
namespace json = boost::json;

fake_ilink::fake_ilink(bool tls) : tls_(tls) {
  process_ = start_fake_script("fake_ilink.py", dir_, tls);
  wait_until([&] {
    auto text = process_->console();
    auto at = text.find("PORT ");
    if (at == std::string::npos || text.find('\n', at) == std::string::npos) return false;
    std::istringstream line(text.substr(at));
    std::string word;
    int api = 0, control = 0, redirect = 0;
    line >> word >> api >> word >> control >> word >> redirect;
    port_ = static_cast<unsigned short>(api);
    control_port_ = static_cast<unsigned short>(control);
    redirect_port_ = static_cast<unsigned short>(redirect);
    return true;
  }, std::chrono::seconds(20));
  if (port_ == 0 || control_port_ == 0 || redirect_port_ == 0)
    ADD_FAILURE() << "the fake iLink API did not start: " << process_->console();
}

json::value fake_ilink::control(const std::string& what, const json::object& body) {
  auto r = http_call(control_port_, "POST", "/control/" + what, {{"Content-Type", "application/json"}},
                     json::serialize(body));
  EXPECT_EQ(r.status, 200) << what << ": " << r.body;
  return r.json();
}

void fake_ilink::qr_script(const std::vector<std::string>& steps) {
  json::array a;
  for (const auto& s : steps) a.emplace_back(s);
  control("qr_script", {{"steps", a}});
}

void fake_ilink::next_bot(const std::string& bot_token, const std::string& ilink_bot_id,
                          const std::string& ilink_user_id) {
  control("bot", {{"bot_token", bot_token}, {"ilink_bot_id", ilink_bot_id}, {"ilink_user_id", ilink_user_id}});
}

void fake_ilink::poll_hold_ms(int ms) { control("poll_hold_ms", {{"ms", ms}}); }
void fake_ilink::batch_size(int n) { control("batch_size", {{"n", n}}); }
void fake_ilink::upload_mode(const std::string& mode) { control("upload_mode", {{"mode", mode}}); }

void fake_ilink::add_message(const std::string& bot_token, const json::object& message) {
  control("message", {{"bot_token", bot_token}, {"message", message}});
}

void fake_ilink::add_messages(const std::string& bot_token, const json::array& messages) {
  control("messages", {{"bot_token", bot_token}, {"messages", messages}});
}

fake_ilink::media_ref fake_ilink::add_media(const std::string& bytes, const std::string& key_form) {
  auto v = control("media", {{"bytes_b64", base64(bytes)}, {"key_form", key_form}});
  media_ref out;
  if (!v.is_object()) return out;
  out.media = v.at("media").as_object();
  out.aeskey_hex = json::value_to<std::string>(v.at("aeskey_hex"));
  return out;
}

void fake_ilink::add_fault(const std::string& path, const std::string& kind, int times) {
  control("fault", {{"path", path}, {"kind", kind}, {"times", times}});
}

void fake_ilink::clear_faults() { control("clear_faults", {}); }
void fake_ilink::expire_token(const std::string& bot_token) { control("expire_token", {{"bot_token", bot_token}}); }

json::object fake_ilink::state() {
  auto v = control("state", {});
  return v.is_object() ? v.as_object() : json::object{};
}

json::object wechat_text_message(const std::string& from_user, const std::string& text, std::int64_t message_id,
                                 const std::string& context_token) {
  return {{"message_id", message_id},
          {"from_user_id", from_user},
          {"to_user_id", ""},
          {"create_time_ms", 1790000000000LL},
          {"message_type", 1},
          {"message_state", 2},
          {"context_token", context_token},
          {"item_list", json::array{json::object{{"type", 1}, {"text_item", {{"text", text}}}}}}};
}

}  // namespace xconn::test

#include "support/fake_telegram.hpp"

#include "support/fake_process.hpp"
#include "support/files_helpers.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace xconn::test {
namespace json = boost::json;

fake_telegram::fake_telegram(bool tls) : tls_(tls) {
  process_ = start_fake_script("fake_bot_api.py", dir_, tls);
  wait_until([&] {
    auto text = process_->console();
    auto at = text.find("PORT ");
    if (at == std::string::npos) return false;
    port_ = static_cast<unsigned short>(std::stoi(text.substr(at + 5)));
    auto control = text.find("CONTROL ");
    control_port_ = control == std::string::npos ? port_ : static_cast<unsigned short>(std::stoi(text.substr(control + 8)));
    return true;
  }, std::chrono::seconds(20));
  if (port_ == 0) ADD_FAILURE() << "the fake Bot API did not start: " << process_->console();
}

json::value fake_telegram::control(const std::string& what, const json::object& body) {
  auto r = http_call(control_port_, "POST", "/control/" + what, {{"Content-Type", "application/json"}}, json::serialize(body));
  EXPECT_EQ(r.status, 200) << what << ": " << r.body;
  return r.json();
}

void fake_telegram::add_bot(const std::string& token, long long id, const std::string& username) {
  control("bot", {{"token", token}, {"id", id}, {"username", username}, {"first_name", "Xconn"}});
}

void fake_telegram::add_chat(long long id, const std::string& type, const std::string& title) {
  json::object chat{{"id", id}, {"type", type}};
  if (type == "private") chat["first_name"] = title;
  else chat["title"] = title;
  control("chat", chat);
}

long long fake_telegram::add_update(const std::string& token, const json::object& message) {
  auto v = control("update", {{"token", token}, {"update", {{"message", message}}}});
  return v.is_object() ? v.at("update_id").to_number<long long>() : -1;
}

long long fake_telegram::add_raw_update(const std::string& token, const json::object& update) {
  auto v = control("update", {{"token", token}, {"update", update}});
  return v.is_object() ? v.at("update_id").to_number<long long>() : -1;
}

void fake_telegram::add_updates(const std::string& token, const json::array& messages) {
  control("updates", {{"token", token}, {"messages", messages}});
}

void fake_telegram::add_file(const std::string& file_id, const std::string& path, const std::string& bytes) {
  control("file", {{"file_id", file_id}, {"path", path}, {"base64", base64(bytes)}});
}

void fake_telegram::add_fault(const std::string& method, int status, const std::string& description, int times,
                              int retry_after) {
  json::object f{{"method", method}, {"status", status}, {"description", description}, {"times", times}};
  if (retry_after) f["retry_after"] = retry_after;
  control("fault", f);
}

void fake_telegram::clear_faults() { control("clear_faults", {}); }

std::vector<double> fake_telegram::call_times(const std::string& method) {
  std::vector<double> out;
  auto s = state();
  if (auto* calls = s.if_contains("calls"); calls && calls->is_object())
    if (auto* times = calls->as_object().if_contains(method); times && times->is_array())
      for (const auto& t : times->as_array()) out.push_back(t.to_number<double>());
  return out;
}

json::object fake_telegram::state() {
  auto v = control("state", {});
  return v.is_object() ? v.as_object() : json::object{};
}

json::object telegram_text(long long chat_id, const std::string& chat_type, long long message_id, long long from_id,
                           const std::string& first_name, const std::string& text) {
  return {{"message_id", message_id},
          {"date", 1790000000},
          {"chat", {{"id", chat_id}, {"type", chat_type}}},
          {"from", {{"id", from_id}, {"is_bot", false}, {"first_name", first_name}}},
          {"text", text}};
}

}  // namespace xconn::test

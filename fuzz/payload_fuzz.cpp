// The payload readers, fed a payload object's JSON text. The text is wrapped in a packet envelope and goes
// through the decoder and payload_of() as the dispatch does it (packet_handlers.cpp), then through each pure
// reader of a payload: connector.hello (negotiate_hello), auth.start's input against the sample plugin's form and
// QR flows (check_auth_input, secret_inputs_json), and a plugin's auth answer (parse_auth_answer). Checked: no
// throw, an accepted hello names only profiles both sides declare, accepted form input has every required field
// and the secrets collected are its secret fields' values, an accepted auth answer has a known status and a
// binding exactly when authenticated.
#include "core/channels/auth_flow.hpp"
#include "core/wire/hello.hpp"
#include "core/wire/packet.hpp"
#include "core/wire/packet_payload.hpp"
#include "fuzz/fuzz_check.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace {

using namespace xconn;
namespace json = boost::json;

void check_hello(const packet_view& p) {
  static const std::vector<std::string> card_profiles{"xagent.im.v2", "xagent.im.v1"};
  auto out = negotiate_hello(p.payload.value_or(std::string_view()), "im.sample_bot", card_profiles);
  if (!out.error_code.empty()) {
    FUZZ_CHECK(!out.error_message.empty() && out.profiles.empty());
    return;
  }
  FUZZ_CHECK(!out.profiles.empty());
  for (const auto& profile : out.profiles)
    FUZZ_CHECK(std::find(card_profiles.begin(), card_profiles.end(), profile) != card_profiles.end());
}

void check_auth_start(const json::object& payload) {
  const json::object* input = nullptr;
  if (auto* v = payload.if_contains("input"); v && v->is_object()) input = &v->as_object();
  for (const char* flow_id : {"sample_qr", "sample_token"}) {
    const json::object* flow = find_auth_flow(fuzz::sample_plugin(), flow_id);
    FUZZ_CHECK(flow != nullptr);
    std::vector<std::string> secrets;
    const std::string problem = check_auth_input(*flow, input, secrets);
    const std::string sealed = secret_inputs_json(*flow, input);
    if (!sealed.empty()) FUZZ_CHECK(json::parse(sealed).is_object());
    if (!problem.empty()) continue;
    if (std::string_view(flow_id) == "sample_token") {
      FUZZ_CHECK(input != nullptr);
      for (const char* required : {"token", "chat"}) {
        auto* v = input->if_contains(required);
        FUZZ_CHECK(v && v->is_string() && !v->as_string().empty());
      }
      for (const auto& s : secrets) {
        bool found = false;
        for (const char* secret : {"token", "pin"})
          if (auto* v = input->if_contains(secret); v && v->is_string() && v->as_string() == s) found = true;
        FUZZ_CHECK(found);
      }
    }
  }
}

void check_auth_answer(std::string_view text) {
  static constexpr std::string_view statuses[] = {"pending", "scanned", "authenticated", "expired",
                                                  "qr_refresh_required", "failed", "unauthenticated"};
  auto for_status = parse_auth_answer(text, true);
  auto for_start = parse_auth_answer(text, false);
  if (for_start) FUZZ_CHECK(for_status.has_value());  // auth.status accepts everything auth.start does
  if (!for_status) {
    FUZZ_CHECK(!for_status.error().empty());
    return;
  }
  const auto& a = *for_status;
  FUZZ_CHECK(std::find(std::begin(statuses), std::end(statuses), a.status) != std::end(statuses));
  FUZZ_CHECK(a.binding.has_value() == (a.status == "authenticated"));
  if (for_start) FUZZ_CHECK(a.status != "unauthenticated");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static packet_decoder decoder;
  const std::string_view payload_text(reinterpret_cast<const char*>(data), size);
  std::string frame = R"({"schema":"xagent.connector.packet/v1","packet_id":"pkt_1","type":"x","payload":)";
  frame.append(payload_text).append("}");

  packet_error error;
  auto p = decoder.decode(frame, error);
  if (!p) return 0;
  FUZZ_CHECK(p->payload.has_value());
  auto read = payload_of(*p);  // nullopt (an invalid_packet) when Boost.JSON cannot read what the decoder took
  if (!read) return 0;
  const json::object payload = std::move(*read);

  check_hello(*p);
  check_auth_start(payload);
  check_auth_answer(*p->payload);
  return 0;
}

#include "core/channels/auth_flow.hpp"

#include "support/sample_manifest.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace xconn {
namespace {
namespace json = boost::json;

// The shared sample with two auth flows: a QR login and a form of every kind of field.
const char* const sample_auth_flows = R"json([
  {"id": "sample_qr", "target_type": "im", "type": "qr_login", "title": "Scan a QR code"},
  {
    "id": "sample_token",
    "target_type": "im",
    "type": "form",
    "title": "Enter a token",
    "fields": [
      {"name": "token", "label": "Token", "input_type": "password", "required": true, "secret": true},
      {"name": "pin", "label": "PIN", "input_type": "text", "secret": true},
      {"name": "chat", "label": "Chat", "input_type": "text", "required": true},
      {"name": "note", "label": "Note", "input_type": "text", "default_value": "hi"}
    ]
  }
])json";

const plugin_manifest& flow_sample() {
  static const plugin_manifest m = [] {
    auto manifest = test::sample_manifest();
    manifest["card"].as_object()["auth_flows"] = json::parse(sample_auth_flows);
    auto r = parse_manifest(json::serialize(manifest), test::sample_build_json);
    EXPECT_TRUE(r.has_value()) << (r ? "" : r.error());
    return r ? *r : plugin_manifest{};
  }();
  return m;
}

const json::object& form() {
  auto* f = find_auth_flow(flow_sample(), "sample_token");
  EXPECT_NE(f, nullptr);
  static const json::object none;
  return f ? *f : none;
}
const json::object& qr() {
  auto* f = find_auth_flow(flow_sample(), "sample_qr");
  EXPECT_NE(f, nullptr);
  static const json::object none;
  return f ? *f : none;
}

const std::string planted = "S3cr3t-V4lue-never-shown";

std::string check(const json::object& flow, const json::object* input, std::vector<std::string>* secrets_out = nullptr) {
  std::vector<std::string> secrets;
  auto r = check_auth_input(flow, input, secrets);
  if (secrets_out) *secrets_out = secrets;
  return r;
}

// find_auth_flow ---------------------------------------------------------------------------------------------

TEST(FindAuthFlow, ByIdOnly) {
  ASSERT_NE(find_auth_flow(flow_sample(), "sample_qr"), nullptr);
  EXPECT_EQ(find_auth_flow(flow_sample(), "sample_qr")->at("type"), "qr_login");
  ASSERT_NE(find_auth_flow(flow_sample(), "sample_token"), nullptr);
  EXPECT_EQ(find_auth_flow(flow_sample(), "sample_token")->at("type"), "form");
  EXPECT_EQ(find_auth_flow(flow_sample(), "nope"), nullptr);
  EXPECT_EQ(find_auth_flow(flow_sample(), ""), nullptr);
  EXPECT_EQ(find_auth_flow(flow_sample(), "Sample_QR"), nullptr);
  plugin_manifest none;
  none.card = json::object{{"connector_card_id", "x"}};
  EXPECT_EQ(find_auth_flow(none, "sample_qr"), nullptr);
}

// check_auth_input: form -------------------------------------------------------------------------------------

TEST(CheckAuthInput, ValidForm) {
  json::object in{{"token", planted}, {"chat", "general"}};
  std::vector<std::string> secrets;
  EXPECT_EQ(check(form(), &in, &secrets), "");
  EXPECT_EQ(secrets, std::vector<std::string>{planted});
  json::object all{{"token", planted}, {"chat", "general"}, {"pin", "4711-2"}, {"note", ""}};
  EXPECT_EQ(check(form(), &all, &secrets), "");  // an optional field may be empty
}

TEST(CheckAuthInput, RequiredFieldMissing) {
  json::object no_token{{"chat", "general"}};
  auto r = check(form(), &no_token);
  EXPECT_NE(r.find("token"), std::string::npos) << r;
  EXPECT_NE(r.find("required"), std::string::npos) << r;
  json::object no_chat{{"token", planted}};
  r = check(form(), &no_chat);
  EXPECT_NE(r.find("chat"), std::string::npos) << r;
  EXPECT_EQ(r.find(planted), std::string::npos) << r;
  json::object empty;
  EXPECT_NE(check(form(), &empty), "");
  EXPECT_NE(check(form(), nullptr), "");  // no input at all
}

TEST(CheckAuthInput, RequiredFieldEmptyString) {
  json::object in{{"token", ""}, {"chat", "general"}};
  auto r = check(form(), &in);
  EXPECT_NE(r.find("token"), std::string::npos) << r;
  json::object in2{{"token", planted}, {"chat", ""}};
  r = check(form(), &in2);
  EXPECT_NE(r.find("chat"), std::string::npos) << r;
  EXPECT_EQ(r.find(planted), std::string::npos) << r;
}

TEST(CheckAuthInput, UnknownField) {
  json::object in{{"token", planted}, {"chat", "general"}, {"password", planted}};
  auto r = check(form(), &in);
  EXPECT_NE(r.find("password"), std::string::npos) << r;
  EXPECT_NE(r.find("not a field"), std::string::npos) << r;
  EXPECT_EQ(r.find(planted), std::string::npos) << r;
  // A huge unknown name is cut in the reason.
  json::object huge{{std::string(5000, 'k'), "v"}};
  r = check(form(), &huge);
  EXPECT_NE(r, "");
  EXPECT_LT(r.size(), 200u) << r.size();
}

TEST(CheckAuthInput, NonStringValues) {
  for (json::value v : {json::value(1234567), json::value(true), json::value(nullptr), json::value(json::array{planted}),
                        json::value(json::object{{"x", planted}})}) {
    json::object in{{"token", v}, {"chat", "general"}};
    auto r = check(form(), &in);
    EXPECT_NE(r.find("token"), std::string::npos) << r;
    EXPECT_NE(r.find("string"), std::string::npos) << r;
    EXPECT_EQ(r.find(planted), std::string::npos) << r;
    EXPECT_EQ(r.find("1234567"), std::string::npos) << r;
  }
}

TEST(CheckAuthInput, Oversize) {
  std::string big = planted + std::string(16 * 1024, 'x');
  json::object in{{"token", big}, {"chat", "general"}};
  auto r = check(form(), &in);
  EXPECT_NE(r.find("token"), std::string::npos) << r;
  EXPECT_NE(r.find("too long"), std::string::npos) << r;
  EXPECT_EQ(r.find(planted), std::string::npos) << r;
  // 16 KiB exactly is still fine, one byte more is not.
  json::object edge{{"token", std::string(16 * 1024, 'x')}, {"chat", "general"}};
  EXPECT_EQ(check(form(), &edge), "");
  json::object over{{"chat", "general"}, {"note", std::string(16 * 1024 + 1, 'x')}};
  r = check(form(), &over);
  EXPECT_NE(r.find("note"), std::string::npos) << r;
}

TEST(CheckAuthInput, ReasonNeverHoldsAValue) {
  std::vector<json::object> bad{
      {{"token", planted}},
      {{"token", planted}, {"chat", ""}},
      {{"token", planted}, {"chat", planted}, {"extra", planted}},
      {{"token", planted}, {"chat", 5}},
      {{"token", planted + std::string(20000, 'z')}, {"chat", "c"}},
      {{"chat", planted}},
  };
  for (const auto& in : bad) {
    auto r = check(form(), &in);
    EXPECT_NE(r, "") << json::serialize(in).substr(0, 200);
    EXPECT_EQ(r.find(planted), std::string::npos) << r;
  }
}

TEST(CheckAuthInput, SecretsOnlyFromSecretAndPasswordFields) {
  json::object in{{"token", "tok-value-1"}, {"pin", "pin-value-2"}, {"chat", "chat-value-3"}, {"note", "note-value-4"}};
  std::vector<std::string> secrets;
  ASSERT_EQ(check(form(), &in, &secrets), "");
  std::sort(secrets.begin(), secrets.end());
  EXPECT_EQ(secrets, (std::vector<std::string>{"pin-value-2", "tok-value-1"}));
}

TEST(CheckAuthInput, PasswordFieldIsSecretEvenWithoutTheFlag) {
  // The card check makes a password field set secret; the input check does not rely on it.
  json::object flow{{"id", "f"},
                    {"type", "form"},
                    {"fields", json::array{json::object{{"name", "pw"}, {"input_type", "password"}, {"required", true}},
                                           json::object{{"name", "s"}, {"input_type", "text"}, {"secret", false}}}}};
  json::object in{{"pw", "hunter22"}, {"s", "plain-text"}};
  std::vector<std::string> secrets;
  ASSERT_EQ(check(flow, &in, &secrets), "");
  EXPECT_EQ(secrets, std::vector<std::string>{"hunter22"});
}

TEST(CheckAuthInput, SecretsAreAppended) {
  json::object in{{"token", "tok-value-1"}, {"chat", "c"}};
  std::vector<std::string> secrets{"earlier-secret"};
  ASSERT_EQ(check_auth_input(form(), &in, secrets), "");
  EXPECT_EQ(secrets, (std::vector<std::string>{"earlier-secret", "tok-value-1"}));
}

// check_auth_input: qr_login ---------------------------------------------------------------------------------

TEST(CheckAuthInput, QrLoginTakesNoInput) {
  EXPECT_EQ(check(qr(), nullptr), "");
  json::object empty;
  EXPECT_EQ(check(qr(), &empty), "");
  json::object some{{"token", planted}};
  std::vector<std::string> secrets;
  auto r = check(qr(), &some, &secrets);
  EXPECT_NE(r.find("token"), std::string::npos) << r;
  EXPECT_EQ(r.find(planted), std::string::npos) << r;
  EXPECT_TRUE(secrets.empty());
}

// parse_auth_answer ------------------------------------------------------------------------------------------

TEST(ParseAuthAnswer, EveryStatus) {
  for (auto s : {"pending", "scanned", "authenticated", "expired", "qr_refresh_required", "failed"}) {
    for (bool for_status : {false, true}) {
      auto r = parse_auth_answer(json::serialize(json::object{{"status", s}}), for_status);
      ASSERT_TRUE(r.has_value()) << s << ": " << r.error();
      EXPECT_EQ(r->status, s);
      EXPECT_TRUE(r->fields.empty());
    }
  }
}

TEST(ParseAuthAnswer, UnauthenticatedOnlyForStatus) {
  EXPECT_FALSE(parse_auth_answer(R"({"status":"unauthenticated"})", false).has_value());
  auto r = parse_auth_answer(R"({"status":"unauthenticated"})", true);
  ASSERT_TRUE(r.has_value()) << r.error();
  EXPECT_EQ(r->status, "unauthenticated");
  EXPECT_FALSE(r->binding);
}

TEST(ParseAuthAnswer, BadStatus) {
  for (auto text : {R"({})", R"({"status":"ok"})", R"({"status":"Pending"})", R"({"status":""})", R"({"status":1})",
                    R"({"status":null})", R"({"status":["pending"]})", R"({"message":"hi"})"})
    for (bool for_status : {false, true})
      EXPECT_FALSE(parse_auth_answer(text, for_status).has_value()) << text;
}

TEST(ParseAuthAnswer, DisplayFieldsPassThrough) {
  auto r = parse_auth_answer(
      R"({"status":"pending","qr_code_text":"https://x/qr","qr_code_image":"data:image/png;base64,AAAA",)"
      R"("expires_at":1790000000000,"poll_interval_millis":2000,"message":"Scan it"})",
      false);
  ASSERT_TRUE(r.has_value()) << r.error();
  EXPECT_EQ(r->fields, (json::object{{"qr_code_text", "https://x/qr"},
                                     {"qr_code_image", "data:image/png;base64,AAAA"},
                                     {"expires_at", 1790000000000LL},
                                     {"poll_interval_millis", 2000},
                                     {"message", "Scan it"}}));
  EXPECT_FALSE(r->binding);
}

TEST(ParseAuthAnswer, UnknownKeysRefused) {
  for (auto text : {R"({"status":"pending","token":"abc"})", R"({"status":"authenticated","access_token":"x"})",
                    R"({"status":"failed","code":"invalid_credentials"})",
                    R"({"status":"pending","connection_descriptor":{}})"}) {
    auto r = parse_auth_answer(text, true);
    EXPECT_FALSE(r.has_value()) << text;
  }
  auto r = parse_auth_answer(R"({"status":"pending","token":"abc"})", false);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().find("token"), std::string::npos) << r.error();
}

TEST(ParseAuthAnswer, BindingOnlyWithAuthenticated) {
  auto r = parse_auth_answer(R"({"status":"authenticated","binding":{"display_name":"Alice"}})", false);
  ASSERT_TRUE(r.has_value()) << r.error();
  ASSERT_TRUE(r->binding);
  EXPECT_EQ(*r->binding, (json::object{{"display_name", "Alice"}}));
  auto none = parse_auth_answer(R"({"status":"authenticated"})", false);
  ASSERT_TRUE(none.has_value());
  ASSERT_TRUE(none->binding);  // authenticated always has one, maybe empty
  EXPECT_TRUE(none->binding->empty());
  for (auto s : {"pending", "scanned", "expired", "qr_refresh_required", "failed", "unauthenticated"}) {
    auto text = json::serialize(json::object{{"status", s}, {"binding", json::object{{"display_name", "A"}}}});
    EXPECT_FALSE(parse_auth_answer(text, true).has_value()) << text;
  }
}

TEST(ParseAuthAnswer, CredentialsOnlyWithAuthenticatedAndOnlyAsShortListsOfStrings) {
  auto r = parse_auth_answer(R"({"status":"authenticated","binding":{},"credentials":{"bot_token":"t-123456789"}})",
                             false);
  ASSERT_TRUE(r.has_value()) << r.error();
  ASSERT_TRUE(r->credentials);
  EXPECT_EQ(*r->credentials, (json::object{{"bot_token", "t-123456789"}}));
  EXPECT_FALSE(r->fields.contains("credentials"));  // kept apart from what is passed on
  EXPECT_FALSE(parse_auth_answer(R"({"status":"authenticated"})", false)->credentials);
  json::object seventeen;
  for (int i = 0; i < 17; ++i) seventeen["k" + std::to_string(i)] = "v";
  for (const auto& text : std::vector<std::string>{
           R"({"status":"pending","credentials":{"bot_token":"t"}})",
           R"({"status":"scanned","credentials":{}})",
           R"({"status":"authenticated","credentials":"t"})",
           R"({"status":"authenticated","credentials":{"bot_token":5}})",
           R"({"status":"authenticated","credentials":{"bot_token":{"nested":"t"}}})",
           R"({"status":"authenticated","credentials":{"bot_token":null}})",
           json::serialize(json::object{{"status", "authenticated"}, {"credentials", seventeen}}),
           json::serialize(json::object{{"status", "authenticated"},
                                        {"credentials", json::object{{"t", std::string(64 * 1024 + 1, 'x')}}}}),
           json::serialize(json::object{{"status", "authenticated"},
                                        {"credentials", json::object{{std::string(65, 'k'), "v"}}}}),
       })
    EXPECT_FALSE(parse_auth_answer(text, true).has_value()) << text.substr(0, 120);
}

TEST(SealedCredentials, ThePluginsAreAddedToTheSecretInputsAndWinOnTheSameName) {
  EXPECT_EQ(sealed_credentials_json("", nullptr), "");
  EXPECT_EQ(sealed_credentials_json(R"({"password":"p"})", nullptr), R"({"password":"p"})");
  json::object obtained{{"bot_token", "t"}, {"password", "q"}};
  EXPECT_EQ(json::parse(sealed_credentials_json("", &obtained)), json::value(obtained));
  EXPECT_EQ(json::parse(sealed_credentials_json(R"({"password":"p","pin":"1"})", &obtained)),
            (json::value(json::object{{"password", "q"}, {"pin", "1"}, {"bot_token", "t"}})));
  json::object none;
  EXPECT_EQ(sealed_credentials_json(R"({"pin":"1"})", &none), R"({"pin":"1"})");
}

TEST(ParseAuthAnswer, WrongTypes) {
  for (auto text : {
           R"({"status":"pending","qr_code_text":5})",
           R"({"status":"pending","qr_code_image":null})",
           R"({"status":"pending","message":["m"]})",
           R"({"status":"pending","expires_at":"1790000000000"})",
           R"({"status":"pending","expires_at":-1})",
           R"({"status":"pending","expires_at":1.5})",
           R"({"status":"pending","expires_at":18446744073709551615})",
           R"({"status":"pending","poll_interval_millis":true})",
           R"({"status":"pending","poll_interval_millis":-2000})",
           R"({"status":"authenticated","binding":"Alice"})",
           R"({"status":"authenticated","binding":[]})",
           R"({"status":"authenticated","binding":null})",
       })
    EXPECT_FALSE(parse_auth_answer(text, true).has_value()) << text;
  EXPECT_TRUE(parse_auth_answer(R"({"status":"pending","expires_at":0,"poll_interval_millis":0})", false).has_value());
}

TEST(ParseAuthAnswer, NotAJsonObject) {
  for (auto text : {"", " ", "null", "true", "42", "\"pending\"", "[]", R"([{"status":"pending"}])", "{",
                    R"({"status":"pending"} trailing)", R"({"status":"pending",})", R"({status:"pending"})"})
    EXPECT_FALSE(parse_auth_answer(text, true).has_value()) << text;
}

TEST(ParseAuthAnswer, HostileInput) {
  // Deep nesting, in a binding and at the top.
  std::string deep = R"({"status":"authenticated","binding":)";
  for (int i = 0; i < 100000; ++i) deep += "{\"a\":";
  deep += "1";
  for (int i = 0; i < 100000; ++i) deep += "}";
  deep += "}";
  EXPECT_FALSE(parse_auth_answer(deep, true).has_value());
  std::string arrays(200000, '[');
  EXPECT_FALSE(parse_auth_answer(arrays, true).has_value());
  // Huge strings: over 64 KiB in a display field is refused, 64 KiB exactly passes.
  auto big = json::serialize(json::object{{"status", "pending"}, {"qr_code_image", std::string(64 * 1024 + 1, 'A')}});
  auto r = parse_auth_answer(big, false);
  ASSERT_FALSE(r.has_value());
  EXPECT_LT(r.error().size(), 200u);  // the error does not repeat the value
  auto edge = json::serialize(json::object{{"status", "pending"}, {"qr_code_image", std::string(64 * 1024, 'A')}});
  EXPECT_TRUE(parse_auth_answer(edge, false).has_value());
  auto huge_message = json::serialize(json::object{{"status", "failed"}, {"message", std::string(8 << 20, 'm')}});
  EXPECT_FALSE(parse_auth_answer(huge_message, false).has_value());
  // A huge unknown key.
  auto huge_key = json::serialize(json::object{{"status", "pending"}, {std::string(1 << 20, 'k'), 1}});
  EXPECT_FALSE(parse_auth_answer(huge_key, false).has_value());
  // Invalid UTF-8 and embedded NULs in strings.
  EXPECT_FALSE(parse_auth_answer("{\"status\":\"pending\",\"message\":\"\xff\xfe\"}", false).has_value());
  EXPECT_FALSE(parse_auth_answer(std::string("{\"status\":\"pend\0ing\"}", 21), false).has_value());
}

// mentions_secret --------------------------------------------------------------------------------------------

TEST(MentionsSecret, FindsSecretsOfEightBytesOrMore) {
  std::vector<std::string> secrets{"echo", "pass123", "hunter22", "", "12345678"};
  EXPECT_TRUE(mentions_secret("your password hunter22 was wrong", secrets));
  EXPECT_TRUE(mentions_secret("hunter22", secrets));
  EXPECT_TRUE(mentions_secret("pin 12345678", secrets));
  EXPECT_TRUE(mentions_secret(R"({"message":"xhunter22x"})", secrets));
  // Shorter secrets turn up in ordinary text and do not count.
  EXPECT_FALSE(mentions_secret("echo is a word", secrets));
  EXPECT_FALSE(mentions_secret("pass123 is seven bytes", secrets));
  EXPECT_FALSE(mentions_secret("hunter2", secrets));
  EXPECT_FALSE(mentions_secret("1234567", secrets));
  EXPECT_FALSE(mentions_secret("", secrets));
  EXPECT_FALSE(mentions_secret("anything", {}));
  EXPECT_FALSE(mentions_secret("HUNTER22", secrets));  // exact bytes only
}

TEST(MentionsSecret, AnswerRepeatingAFormSecret) {
  json::object in{{"token", planted}, {"chat", "c"}};
  std::vector<std::string> secrets;
  ASSERT_EQ(check_auth_input(form(), &in, secrets), "");
  auto r = parse_auth_answer(json::serialize(json::object{{"status", "failed"}, {"message", "bad token " + planted}}),
                             false);
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(mentions_secret(json::serialize(r->fields), secrets));
  EXPECT_FALSE(mentions_secret(R"({"message":"bad token"})", secrets));
}

}  // namespace
}  // namespace xconn

namespace xconn {
namespace {

// A plugin's answer that ends the run without a sign-in: expired and unauthenticated end it; the answers a run goes
// on after do not (authenticated and failed are ended by the caller, with what it records).
TEST(auth_flow, expired_and_unauthenticated_answers_end_the_run) {
  EXPECT_EQ(run_ended_without_sign_in("expired"), auth_run_state::expired);
  EXPECT_EQ(run_ended_without_sign_in("unauthenticated"), auth_run_state::canceled)
      << "its record answers unauthenticated from then on, as a canceled run's does";
  for (const char* goes_on : {"pending", "scanned", "qr_refresh_required", "authenticated", "failed"})
    EXPECT_FALSE(run_ended_without_sign_in(goes_on)) << goes_on;
}

}  // namespace
}  // namespace xconn

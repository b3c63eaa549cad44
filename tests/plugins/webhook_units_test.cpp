// The webhook plugin's own rules, tested directly (plugins/webhook/*.hpp) and through its C ABI table: receiver URLs,
// the signature header and its 300 s window, the inbound body's fields, the msg_id index's bounds, and a config
// section refused with the key named (never its value).
#include "plugins/webhook/webhook_inbound.hpp"
#include "plugins/webhook/webhook_signature.hpp"
#include "plugins/webhook/webhook_url.hpp"
#include "support/abi_test_host.hpp"
#include "support/test_support.hpp"

#include <boost/dll/shared_library.hpp>
#include <gtest/gtest.h>

#include <string>
#include <variant>
#include <vector>

namespace {

TEST(WebhookUrl, ReceiverUrlsParseWithTheirAuthorityAsWritten) {
  auto plain = webhook::receiver_url::parse("http://127.0.0.1:8080/hooks/in?team=ops");
  ASSERT_TRUE(plain);
  EXPECT_FALSE(plain->tls);
  EXPECT_EQ(plain->host, "127.0.0.1");
  EXPECT_EQ(plain->port, "8080");
  EXPECT_EQ(plain->authority, "127.0.0.1:8080");
  EXPECT_EQ(plain->target, "/hooks/in?team=ops");
  auto tls = webhook::receiver_url::parse("https://hooks.example.com");
  ASSERT_TRUE(tls);
  EXPECT_TRUE(tls->tls);
  EXPECT_EQ(tls->port, "443");
  EXPECT_EQ(tls->authority, "hooks.example.com");
  EXPECT_EQ(tls->target, "/");
  auto query_only = webhook::receiver_url::parse("http://h?x=1");
  ASSERT_TRUE(query_only);
  EXPECT_EQ(query_only->target, "/?x=1");
  auto v6 = webhook::receiver_url::parse("http://[::1]:9000/x");
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->authority, "[::1]:9000");
  for (const char* bad : {"", "ftp://host/x", "http://", "https://:80/", "http://host:/x", "http://host:0/",
                          "http://host:65536/", "http://host:8o/", "http://user:pw@host/", "http://host/a b",
                          "http://host/#frag", "http://ho\tst/", "http://[::1/", "http://[zz]/", "host/x",
                          "HTTP://host/", "http://h\xC3\xA9st/", "http://host/\r\nX-Injected: 1"})
    EXPECT_FALSE(webhook::receiver_url::parse(bad)) << bad;
  EXPECT_FALSE(webhook::receiver_url::parse("http://h/" + std::string(2100, 'a')));
}

TEST(WebhookSignature, TheHeaderIsCheckedWithinThreeHundredSecondsEitherSide) {
  const std::string key = "0123456789abcdef-secret";
  const std::string body = R"({"text":"hi"})";
  const std::int64_t now = 1767225600;
  // A known answer (Python's hmac.new(key, b"<t>.<body>", sha256)), so any sender's library agrees.
  EXPECT_EQ(webhook::signature_hex("Jefe-0123456789abcdef", 1700000000, "what do ya want for nothing?"),
            "d0949dde098f85d54f5f61b7b9a938a2caf4115777e3974bb5dcdadeac7f5943");
  EXPECT_NE(webhook::signature_hex(key, now, body), webhook::signature_hex(key, now + 1, body));
  using webhook::signature_check;
  auto check = [&](const std::string& header) { return webhook::check_signature(header, key, body, now); };
  EXPECT_EQ(check(webhook::signature_header(key, now, body)), signature_check::ok);
  EXPECT_EQ(check(webhook::signature_header(key, now - 300, body)), signature_check::ok);
  EXPECT_EQ(check(webhook::signature_header(key, now + 300, body)), signature_check::ok);
  EXPECT_EQ(check(webhook::signature_header(key, now - 301, body)), signature_check::outside_window);
  EXPECT_EQ(check(webhook::signature_header(key, now + 301, body)), signature_check::outside_window);
  EXPECT_EQ(check(webhook::signature_header(key + "x", now, body)), signature_check::mismatch);
  EXPECT_EQ(webhook::check_signature(webhook::signature_header(key, now, body), key, body + " ", now), signature_check::mismatch);
  // Upper-case hex, spaces after commas, a second v1 (a rotated secret) and an unknown scheme are all read.
  auto hex = webhook::signature_hex(key, now, body);
  std::string upper = hex;
  for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_EQ(check("t=" + std::to_string(now) + ", v1=" + upper), signature_check::ok);
  EXPECT_EQ(check("t=" + std::to_string(now) + ",v1=" + std::string(64, '0') + ",v1=" + hex + ",v0=abc"), signature_check::ok);
  EXPECT_EQ(check("v1=" + hex + ",t=" + std::to_string(now)), signature_check::ok);
  for (const std::string& bad : {std::string(), "t=" + std::to_string(now), "v1=" + hex, "t=abc,v1=" + hex,
                                 "t=" + std::to_string(now) + ",v1=" + hex.substr(1),
                                 "t=" + std::to_string(now) + ",t=" + std::to_string(now) + ",v1=" + hex,
                                 "t=-5,v1=" + hex, "t=99999999999999999999,v1=" + hex, std::string(5000, ',')})
    EXPECT_EQ(check(bad), signature_check::malformed) << bad;
}

TEST(WebhookInbound, TheBodyIsReadFieldByFieldAndABadOneNamesItsField) {
  auto read = webhook::read_inbound_body(
      R"({"text":"t","sender_id":"s","sender_name":"n","msg_id":"m","channel_key":"webhook/group/x","at":5,"trigger":false,"context_text":"c"})");
  ASSERT_TRUE(std::holds_alternative<boost::json::object>(read));
  EXPECT_EQ(std::get<boost::json::object>(read).size(), 8u);
  auto field_of = [](std::string_view body) {
    auto r = webhook::read_inbound_body(body);
    return std::holds_alternative<webhook::body_error>(r) ? std::get<webhook::body_error>(r).field : std::string("ok");
  };
  EXPECT_EQ(field_of(R"({"text":"","context_text":"what the model reads"})"), "ok");
  EXPECT_EQ(field_of("nope"), "body");
  EXPECT_EQ(field_of("\"text\""), "body");
  EXPECT_EQ(field_of(R"({"text":"a","x":{"y":{"z":{"w":{"v":{"u":1}}}}}})"), "body");  // deeper than any emit field
  EXPECT_EQ(field_of(std::string(100000, '[')), "body");
  EXPECT_EQ(field_of(R"({"sender_id":"s"})"), "text");
  EXPECT_EQ(field_of(R"({"text":null})"), "text");
  EXPECT_EQ(field_of(R"({"text":"a","at":1.5})"), "at");
  EXPECT_EQ(field_of(R"({"text":"a","trigger":1})"), "trigger");
  EXPECT_EQ(field_of(R"({"text":"a","files":[]})"), "files");
  EXPECT_EQ(field_of(R"({"text":"a","role":"host"})"), "role");
  auto error = std::get<webhook::body_error>(webhook::read_inbound_body(R"({"text":"a","at":"x"})"));
  EXPECT_EQ(error.message.substr(0, 3), "at:");
}

class WebhookAbi : public ::testing::Test {
 protected:
  xconn::test::plugin_config_check validate{"webhook.so"};
};

TEST_F(WebhookAbi, TheConfigSectionIsCheckedKeyByKeyAndNeverQuotesAValue) {
  EXPECT_EQ(validate("{}"), "");
  EXPECT_EQ(validate(R"({"auth":{},"config":{"ca_file":"/etc/ssl/extra.pem"},"route":{},"policy":{"max_body_bytes":1048576,"send_budget_s":25,"attempt_timeout_s":10,"replay_keep_s":86400,"replay_keep_max":20000}})"), "");
  EXPECT_EQ(validate(R"({"policy":{"max_body_bytes":1}})"), "");
  const std::string body_rule = "policy.max_body_bytes: must be an integer 1..1048576 (the host's own cap)";
  for (auto bad : {"0", "1048577", "2097152", "\"1M\"", "1.5", "-1"})
    EXPECT_EQ(validate(std::string(R"({"policy":{"max_body_bytes":)") + bad + "}}"), body_rule) << bad;
  EXPECT_EQ(validate(R"({"policy":{"send_budget_s":0}})"), "policy.send_budget_s: must be an integer 1..300");
  EXPECT_EQ(validate(R"({"policy":{"send_budget_s":301}})"), "policy.send_budget_s: must be an integer 1..300");
  EXPECT_EQ(validate(R"({"policy":{"attempt_timeout_s":61}})"), "policy.attempt_timeout_s: must be an integer 1..60");
  EXPECT_EQ(validate(R"({"policy":{"replay_keep_s":59}})"), "policy.replay_keep_s: must be an integer 60..604800");
  EXPECT_EQ(validate(R"({"policy":{"replay_keep_max":20001}})"), "policy.replay_keep_max: must be an integer 100..20000");
  EXPECT_EQ(validate(R"({"config":{"ca_file":""}})"), "config.ca_file: must be a file path");
  EXPECT_EQ(validate(R"({"config":{"ca_file":7}})"), "config.ca_file: must be a file path");
  // A secret put where it does not belong is refused by its key; its value is never repeated.
  auto planted = validate(R"({"auth":{"secret":"planted-config-secret-42"}})");
  EXPECT_EQ(planted, "auth.secret: unknown key");
  EXPECT_EQ(validate(R"({"config":{"outbound_url":"http://planted.example/"}})"), "config.outbound_url: unknown key");
  EXPECT_EQ(validate(R"({"secrets":{}})"), "secrets: unknown group");
  EXPECT_EQ(validate(R"({"policy":[]})"), "policy: must be an object");
  EXPECT_EQ(validate("not json"), "section: must be a JSON object");
  EXPECT_EQ(validate("[]"), "section: must be a JSON object");
  EXPECT_EQ(validate(std::string(100000, '[')), "section: must be a JSON object");
  EXPECT_EQ(validate(std::string(R"({"config":{")") + std::string(10000, 'k') + R"(":1}})").substr(0, 10), "config.kkk");
  // The reason never overflows the host's buffer.
  std::vector<char> tiny(8, 'X');
  std::string long_key = R"({"config":{")" + std::string(300, 'k') + R"(":1}})";
  EXPECT_NE(validate.api()->xconn_plugin_on_validate_config({long_key.data(), long_key.size()}, tiny.data(), tiny.size()), 0);
  EXPECT_EQ(std::string(tiny.data()).size(), 7u);
}

TEST_F(WebhookAbi, TheManifestDeclaresTheFixedSurface) {
  auto manifest = boost::json::parse(std::string_view(validate.api()->manifest_json.data, validate.api()->manifest_json.size)).as_object();
  EXPECT_EQ(manifest.at("id"), "webhook");
  const auto& card = manifest.at("card").as_object();
  EXPECT_EQ(card.at("connector_card_id"), "im.webhook");
  EXPECT_EQ(card.at("supports").at("profiles"), boost::json::array{"xagent.im.v2"});
  const auto& flow = card.at("auth_flows").as_array().at(0).as_object();
  EXPECT_EQ(flow.at("id"), "webhook_binding");
  const auto& fields = flow.at("fields").as_array();
  ASSERT_EQ(fields.size(), 2u);
  EXPECT_EQ(fields[0].at("name"), "outbound_url");
  EXPECT_EQ(fields[0].at("input_type"), "text");
  EXPECT_EQ(fields[1].at("name"), "secret");
  EXPECT_EQ(fields[1].at("input_type"), "password");
  EXPECT_EQ(fields[1].at("secret"), true);
  EXPECT_EQ(card.at("tools").as_array().at(0).at("tool_id"), "webhook_post");
  EXPECT_EQ(manifest.at("tool_options").at("webhook_post").at("side_effect"), true);
  EXPECT_EQ(manifest.at("delivery").at("can_split"), true);
  EXPECT_EQ(manifest.at("http_routes"),
            boost::json::parse(R"([{"path":"/in/{id}","method":"POST","public":true}])"));
}

}  // namespace

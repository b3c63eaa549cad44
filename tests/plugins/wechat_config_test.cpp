// The wechat plugin's config section (connectors.wechat) through its real .so: each key checked by its rule, every
// refusal naming the key and never quoting the value (a planted value is looked for), hostile sections refused.
#include "support/abi_test_host.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

class WechatConfig : public ::testing::Test {
 protected:
  xconn::test::plugin_config_check validate{"wechat.so"};
};

TEST_F(WechatConfig, EachKeyIsCheckedByItsRuleAndNoRefusalQuotesAValue) {
  EXPECT_EQ(validate("{}"), "");
  EXPECT_EQ(validate(R"({"config":{"api_base_url":"https://ilinkai.weixin.qq.com",
                                    "cdn_base_url":"https://novac2c.cdn.weixin.qq.com/c2c"}})"), "");
  EXPECT_EQ(validate(R"({"config":{"api_base_url":"http://127.0.0.1:9000","cdn_base_url":"http://[::1]:9000/c2c"}})"), "");
  EXPECT_EQ(validate(R"({"config":{"proxy":"socks5://user:pass@127.0.0.1:1080"}})"), "");
  const std::string not_a_url = ": must be an http:// or https:// URL";
  for (const char* key : {"api_base_url", "cdn_base_url"})
    for (auto bad : {R"("gopher://planted-host")", R"("planted-host")", R"("https://")", R"("http://h/a?planted")",
                     R"("http://h:port")", R"("")", R"(443)", R"(null)"}) {
      auto why = validate(std::string(R"({"config":{")") + key + R"(":)" + bad + "}}");
      EXPECT_EQ(why, std::string("config.") + key + not_a_url) << bad;
      EXPECT_EQ(why.find("planted"), std::string::npos) << why;
    }
  for (auto bad : {R"("https://user:planted@proxy:3128/x")", R"("socks4://proxy:1080")", R"("http://proxy:3128/p")"}) {
    auto why = validate(std::string(R"({"config":{"proxy":)") + bad + "}}");
    EXPECT_EQ(why, "config.proxy: must be http://[user:password@]host:port or socks5://[user:password@]host:port");
  }
  // A path is read when the plugin starts (a file that cannot be read is a warning naming the key); here its form.
  EXPECT_EQ(validate(R"({"config":{"ca_file":"/etc/ssl/extra.pem"}})"), "");
  EXPECT_EQ(validate(R"({"config":{"ca_file":["planted"]}})"), "config.ca_file: must be a file path");
  EXPECT_EQ(validate(R"({"config":{"bot_token":"planted-token"}})"), "config.bot_token: unknown key");
  EXPECT_EQ(validate(R"({"secrets":{}})"), "secrets: unknown group");
  EXPECT_EQ(validate(R"({"config":[]})"), "config: must be an object");
  EXPECT_EQ(validate("not json"), "section: must be a JSON object");
  EXPECT_EQ(validate(std::string(100000, '[')), "section: must be a JSON object");
  EXPECT_EQ(validate(R"({"config":{"api_base_url":")" + std::string(1 << 20, 'a') + R"("}})"),
            "config.api_base_url" + not_a_url);
}

}  // namespace

// The config table: each rule's refusal text, values landing in their fields, and malformed or hostile sections
// refused with a message that names the key and never repeats the value.
#include <xconn/adapter/config_table.hpp>

#include <gtest/gtest.h>

#include <string>

using namespace xconn::adapter;
namespace rule = xconn::adapter::config_rule;

namespace {

struct sample_settings {
  std::string ca_file;
  std::string base_url = "https://default.example";
  std::string mode = "poll";
  std::string token;
  bool verbose = false;
  int timeout_s = 30;
  std::int64_t max_bytes = 1024;
};

const config_table<sample_settings> table{
    {"config.ca_file", rule::file_path(false), &sample_settings::ca_file},
    {"config.base_url", rule::url(), &sample_settings::base_url},
    {"config.mode", rule::one_of{"poll", "push"}, &sample_settings::mode},
    {"auth.token", rule::secret{8, 64}, &sample_settings::token},
    {"config.verbose", rule::flag{}, &sample_settings::verbose},
    {"policy.timeout_s", rule::integer(1, 60), &sample_settings::timeout_s},
    {"policy.max_bytes", rule::integer(1, 1 << 20, " (the host's own cap)"), &sample_settings::max_bytes},
};

std::string check(std::string_view json, sample_settings* out = nullptr) { return table.check_text(json, out); }

}  // namespace

TEST(config_table, good_values_land_in_their_fields) {
  sample_settings s;
  EXPECT_EQ(check(R"({"config":{"ca_file":"/etc/ca.pem","base_url":"http://127.0.0.1:8080/x","mode":"push",
                     "verbose":true},"auth":{"token":"abcdefgh12"},"policy":{"timeout_s":60,"max_bytes":1048576}})",
                  &s),
            "");
  EXPECT_EQ(s.ca_file, "/etc/ca.pem");
  EXPECT_EQ(s.base_url, "http://127.0.0.1:8080/x");
  EXPECT_EQ(s.mode, "push");
  EXPECT_EQ(s.token, "abcdefgh12");
  EXPECT_TRUE(s.verbose);
  EXPECT_EQ(s.timeout_s, 60);
  EXPECT_EQ(s.max_bytes, 1048576);
  EXPECT_EQ(check("{}"), "");
  EXPECT_EQ(check(R"({"route":{}})"), "");
}

TEST(config_table, check_only_writes_nothing) {
  sample_settings s;
  EXPECT_EQ(check(R"({"policy":{"timeout_s":5}})"), "");
  EXPECT_EQ(s.timeout_s, 30);
}

TEST(config_table, each_rule_says_why) {
  EXPECT_EQ(check(R"({"config":{"ca_file":""}})"), "config.ca_file: must be a file path");
  EXPECT_EQ(check(R"({"config":{"ca_file":7}})"), "config.ca_file: must be a file path");
  EXPECT_EQ(check(R"({"config":{"base_url":"ftp://x"}})"), "config.base_url: must be an http:// or https:// URL");
  EXPECT_EQ(check(R"({"config":{"base_url":"https://"}})"), "config.base_url: must be an http:// or https:// URL");
  EXPECT_EQ(check(R"({"config":{"base_url":"http://a b/"}})"), "config.base_url: must be an http:// or https:// URL");
  EXPECT_EQ(check(R"({"config":{"mode":"Poll"}})"), "config.mode: must be one of poll, push");
  EXPECT_EQ(check(R"({"config":{"verbose":"true"}})"), "config.verbose: must be true or false");
  EXPECT_EQ(check(R"({"config":{"verbose":1}})"), "config.verbose: must be true or false");
  EXPECT_EQ(check(R"({"policy":{"timeout_s":0}})"), "policy.timeout_s: must be an integer 1..60");
  EXPECT_EQ(check(R"({"policy":{"timeout_s":61}})"), "policy.timeout_s: must be an integer 1..60");
  EXPECT_EQ(check(R"({"policy":{"max_bytes":1048577}})"), "policy.max_bytes: must be an integer 1..1048576 (the host's own cap)");
}

TEST(config_table, numbers_that_are_not_plain_integers_are_refused) {
  for (const char* v : {"30.0", "3e1", "\"30\"", "true", "null", "[30]", "{}", "-1", "18446744073709551615",
                        "9223372036854775807", "-9223372036854775808", "1e400"}) {
    std::string why = check(std::string(R"({"policy":{"timeout_s":)") + v + "}}");
    if (std::string(v) == "1e400") {
      EXPECT_NE(why, "") << v;  // out of range for a double: not JSON Boost.JSON takes, or refused by the rule
      continue;
    }
    EXPECT_EQ(why, "policy.timeout_s: must be an integer 1..60") << v;
  }
}

TEST(config_table, malformed_sections_are_refused) {
  EXPECT_EQ(check("not json"), "section: must be a JSON object");
  EXPECT_EQ(check("[]"), "section: must be a JSON object");
  EXPECT_EQ(check(""), "section: must be a JSON object");
  EXPECT_EQ(check(std::string(100000, '[')), "section: must be a JSON object");
  EXPECT_EQ(check(std::string(100000, '{')), "section: must be a JSON object");
  EXPECT_EQ(check(R"({"config":{"ca_file":"a"})"), "section: must be a JSON object");  // cut short
  EXPECT_EQ(check(R"({"secrets":{}})"), "secrets: unknown group");
  EXPECT_EQ(check(R"({"config":[]})"), "config: must be an object");
  EXPECT_EQ(check(R"({"config":null})"), "config: must be an object");
  EXPECT_EQ(check(R"({"config":{"nope":1}})"), "config.nope: unknown key");
  // A key known in one group is unknown in another: the group is part of the key.
  EXPECT_EQ(check(R"({"policy":{"ca_file":"/x"}})"), "policy.ca_file: unknown key");
  EXPECT_EQ(check(R"({"config":{"ca_file\u0000x":"/x"}})").substr(0, 14), "config.ca_file");
  EXPECT_NE(check(R"({"config":{"ca_file\u0000x":"/x"}})"), "");
}

TEST(config_table, refusals_never_repeat_the_value) {
  const std::string planted = "planted-secret-value";
  for (const std::string& section :
       {R"({"auth":{"token":")" + planted.substr(0, 5) + R"("}})",               // too short
        R"({"auth":{"token":")" + planted + std::string(100, 'x') + R"("}})",  // too long
        R"({"config":{"base_url":"ftp://)" + planted + R"("}})",
        R"({"config":{"mode":")" + planted + R"("}})",
        R"({"config":{"verbose":")" + planted + R"("}})",
        R"({"policy":{"timeout_s":")" + planted + R"("}})"}) {
    auto why = check(section);
    EXPECT_NE(why, "") << section;
    EXPECT_EQ(why.find("planted"), std::string::npos) << why;
  }
  EXPECT_EQ(check(R"({"auth":{"token":"short"}})"), "auth.token: must be a secret string of 8..64 bytes");
}

TEST(config_table, the_first_refusal_wins_and_earlier_values_stay_in_order) {
  sample_settings s;
  EXPECT_EQ(check(R"({"policy":{"timeout_s":5,"max_bytes":0,"nope":1}})", &s),
            "policy.max_bytes: must be an integer 1..1048576 (the host's own cap)");
  EXPECT_EQ(s.timeout_s, 5);
  EXPECT_EQ(s.max_bytes, 1024);
}

TEST(config_table, a_huge_section_is_walked_without_trouble) {
  std::string big = R"({"config":{)";
  for (int i = 0; i < 20000; ++i) big += "\"k" + std::to_string(i) + "\":1,";
  big += R"("ca_file":"/x"}})";
  EXPECT_EQ(check(big), "config.k0: unknown key");
}

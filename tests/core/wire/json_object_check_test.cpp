#include "core/wire/json_object_check.hpp"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

namespace xconn {
namespace {

TEST(JsonObjectCheck, TellsObjectsWithAndWithoutTheMemberFromTheRest) {
  EXPECT_EQ(check_json_object(R"({"status":"sent","n":[1,2.5,null]})", "files"), json_object_check::object);
  EXPECT_EQ(check_json_object(R"({})", "files"), json_object_check::object);
  EXPECT_EQ(check_json_object(R"( {"files":[]} )", "files"), json_object_check::object_with_member);
  EXPECT_EQ(check_json_object(R"({"a":{"files":[]}})", "files"), json_object_check::object);  // top level only
  EXPECT_EQ(check_json_object(R"({"fil\u0065s":1})", "files"), json_object_check::object_with_member);
  for (const char* not_object : {"[1]", "\"files\"", "3", "null", "true"})
    EXPECT_EQ(check_json_object(not_object, "files"), json_object_check::not_object) << not_object;
}

TEST(JsonObjectCheck, MalformedTruncatedAndHostileTextIsInvalid) {
  for (std::string bad : std::initializer_list<std::string>{"", "{", R"({"a":})", R"({"a":1,})", R"({"a":1}{)", "{'a':1}", R"({"a":1} x)",
                          "{\"a\":\"\xff\"}", "{\"a\":\"\xc3\"}", std::string("{\"a\":\"x\0y\"}", 11)})
    EXPECT_EQ(check_json_object(bad, "files"), json_object_check::invalid) << bad;
  std::string deep(5000, '[');  // deeper than simdjson's default limit of 1024
  EXPECT_EQ(check_json_object("{\"a\":" + deep + std::string(5000, ']') + "}", "files"), json_object_check::invalid);
}

TEST(JsonObjectCheck, ALargeTextAfterASmallOneIsReadWhole) {
  EXPECT_EQ(check_json_object(R"({"a":1})", "files"), json_object_check::object);
  std::string big = R"({"items":[)";
  for (int i = 0; i < 20000; ++i) big += (i ? ",\"" : "\"") + std::to_string(i) + "\"";
  big += R"(],"files":[]})";
  EXPECT_EQ(check_json_object(big, "files"), json_object_check::object_with_member);
  big.pop_back();
  EXPECT_EQ(check_json_object(big, "files"), json_object_check::invalid);
}

}  // namespace
}  // namespace xconn

#include "core/wire/hello.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace xconn {
namespace {

// parse_protocol_version ------------------------------------------------------------------------------------

void expect_version(std::string_view text, int major, int minor) {
  auto v = parse_protocol_version(text);
  ASSERT_TRUE(v.has_value()) << "'" << text << "' should parse";
  EXPECT_EQ(v->major, major) << text;
  EXPECT_EQ(v->minor, minor) << text;
}

void expect_malformed(std::string_view text) {
  EXPECT_FALSE(parse_protocol_version(text).has_value()) << "'" << text << "' should be malformed";
}

TEST(ParseProtocolVersion, MajorDotMinor) {
  expect_version("3.0", 3, 0);
  expect_version("3.1", 3, 1);
  expect_version("10.2", 10, 2);
  expect_version("2.9", 2, 9);
  expect_version("0.0", 0, 0);
}

TEST(ParseProtocolVersion, MissingMinorIsZero) {
  expect_version("3", 3, 0);
  expect_version("4", 4, 0);
}

TEST(ParseProtocolVersion, PartsAfterMinorAreIgnored) {
  expect_version("3.0.7", 3, 0);
  expect_version("3.2.1.9", 3, 2);
}

TEST(ParseProtocolVersion, ComparedNumericallySoLeadingZerosAreTheSameNumber) {
  expect_version("03.1", 3, 1);
  expect_version("3.010", 3, 10);
}

TEST(ParseProtocolVersion, EmptyAndMissingPartsAreMalformed) {
  expect_malformed("");
  expect_malformed(".");
  expect_malformed("3.");
  expect_malformed(".3");
  expect_malformed("..");
  expect_malformed("3..0");
}

TEST(ParseProtocolVersion, LettersAreMalformed) {
  expect_malformed("a.b");
  expect_malformed("a");
  expect_malformed("3.a");
  expect_malformed("3a.0");
  expect_malformed("v3.0");
  expect_malformed("3.0a");
  expect_malformed("0x3.0");
}

TEST(ParseProtocolVersion, SignsAreMalformed) {
  expect_malformed("+3");
  expect_malformed("-1");
  expect_malformed("-3.0");
  expect_malformed("3.-1");
  expect_malformed("3.+1");
  expect_malformed("-0");
}

TEST(ParseProtocolVersion, WhitespaceIsMalformed) {
  expect_malformed(" 3.0");
  expect_malformed("3.0 ");
  expect_malformed("3 .0");
  expect_malformed("3. 0");
  expect_malformed("\t3");
}

TEST(ParseProtocolVersion, HugeNumbersAreMalformedNotWrapped) {
  expect_malformed("99999999999999999999.0");
  expect_malformed("3.99999999999999999999");
  expect_malformed("4294967299.0");  // would wrap to 3 in 32 bits
  expect_malformed(std::string(1000, '9'));
}

// negotiate_hello -------------------------------------------------------------------------------------------

const std::string card_id = "im.echo";
const std::vector<std::string> card_profiles = {"xagent.im.v1", "xagent.im.v2"};

hello_outcome hello(std::string_view payload) { return negotiate_hello(payload, card_id, card_profiles); }

void expect_rejected(std::string_view payload, std::string_view code) {
  auto out = hello(payload);
  EXPECT_EQ(out.error_code, code) << payload;
  EXPECT_FALSE(out.error_message.empty()) << payload;
  EXPECT_TRUE(out.profiles.empty()) << payload;
}

TEST(NegotiateHello, AcceptsAMatchingHello) {
  auto out = hello(R"({"protocol_version":"3.0","connector_card_id":"im.echo",
                       "supported_profiles":["xagent.im.v1","xagent.im.v2"]})");
  EXPECT_EQ(out.error_code, "");
  EXPECT_EQ(out.profiles, card_profiles);
  EXPECT_EQ(out.requested_connector_id, "");
}

TEST(NegotiateHello, HigherVersionsAreAccepted) {
  for (auto v : {"3.1", "3", "4.0", "3.0.7", "10.2", "03.0"}) {
    auto out = hello(std::string(R"({"protocol_version":")") + v +
                     R"(","connector_card_id":"im.echo","supported_profiles":["xagent.im.v2"]})");
    EXPECT_EQ(out.error_code, "") << v;
    EXPECT_EQ(out.profiles, std::vector<std::string>{"xagent.im.v2"}) << v;
  }
}

TEST(NegotiateHello, MissingVersionIsUnsupported) {
  expect_rejected(R"({"connector_card_id":"im.echo","supported_profiles":["xagent.im.v2"]})",
                  "protocol_version_unsupported");
}

TEST(NegotiateHello, NonStringVersionIsUnsupported) {
  expect_rejected(R"({"protocol_version":3.0,"connector_card_id":"im.echo","supported_profiles":["xagent.im.v2"]})",
                  "protocol_version_unsupported");
  expect_rejected(R"({"protocol_version":3,"connector_card_id":"im.echo","supported_profiles":["xagent.im.v2"]})",
                  "protocol_version_unsupported");
  expect_rejected(R"({"protocol_version":null,"connector_card_id":"im.echo","supported_profiles":["xagent.im.v2"]})",
                  "protocol_version_unsupported");
}

TEST(NegotiateHello, MalformedVersionIsUnsupported) {
  for (auto v : {"", ".", "3.", "a.b", "+3", "-1", " 3.0", "3.0 ", "99999999999999.0", "three"})
    expect_rejected(std::string(R"({"protocol_version":")") + v +
                        R"(","connector_card_id":"im.echo","supported_profiles":["xagent.im.v2"]})",
                    "protocol_version_unsupported");
}

TEST(NegotiateHello, BelowThreeIsUnsupported) {
  for (auto v : {"2.9", "2", "1.0", "0.0", "2.99"})
    expect_rejected(std::string(R"({"protocol_version":")") + v +
                        R"(","connector_card_id":"im.echo","supported_profiles":["xagent.im.v2"]})",
                    "protocol_version_unsupported");
}

TEST(NegotiateHello, VersionIsCheckedBeforeTheRest) {
  // Everything else is wrong too; the version decides first.
  expect_rejected(R"({"protocol_version":"2.0","connector_card_id":"other"})", "protocol_version_unsupported");
}

TEST(NegotiateHello, MissingSupportedProfilesIsInvalidPacket) {
  expect_rejected(R"({"protocol_version":"3.0","connector_card_id":"im.echo"})", "invalid_packet");
}

TEST(NegotiateHello, SupportedProfilesNotAnArrayIsInvalidPacket) {
  expect_rejected(R"({"protocol_version":"3.0","connector_card_id":"im.echo","supported_profiles":"xagent.im.v2"})",
                  "invalid_packet");
  expect_rejected(R"({"protocol_version":"3.0","connector_card_id":"im.echo","supported_profiles":{}})",
                  "invalid_packet");
  expect_rejected(R"({"protocol_version":"3.0","connector_card_id":"im.echo","supported_profiles":null})",
                  "invalid_packet");
  expect_rejected(R"({"protocol_version":"3.0","connector_card_id":"im.echo","supported_profiles":[1]})",
                  "invalid_packet");
}

TEST(NegotiateHello, CardIdMismatch) {
  expect_rejected(R"({"protocol_version":"3.0","connector_card_id":"im.other","supported_profiles":["xagent.im.v2"]})",
                  "connector_card_id_mismatch");
  expect_rejected(R"({"protocol_version":"3.0","supported_profiles":["xagent.im.v2"]})", "connector_card_id_mismatch");
  expect_rejected(R"({"protocol_version":"3.0","connector_card_id":"IM.ECHO","supported_profiles":["xagent.im.v2"]})",
                  "connector_card_id_mismatch");
  expect_rejected(R"({"protocol_version":"3.0","connector_card_id":7,"supported_profiles":["xagent.im.v2"]})",
                  "connector_card_id_mismatch");
}

TEST(NegotiateHello, EmptyIntersectionIsProfileNotSupported) {
  expect_rejected(R"({"protocol_version":"3.0","connector_card_id":"im.echo","supported_profiles":[]})",
                  "profile_not_supported");
  expect_rejected(
      R"({"protocol_version":"3.0","connector_card_id":"im.echo","supported_profiles":["xagent.device.v1","x"]})",
      "profile_not_supported");
}

TEST(NegotiateHello, ProfilesFollowTheCardOrder) {
  auto out = hello(R"({"protocol_version":"3.0","connector_card_id":"im.echo",
                       "supported_profiles":["xagent.im.v2","unknown.profile","xagent.im.v1"]})");
  ASSERT_EQ(out.error_code, "");
  EXPECT_EQ(out.profiles, (std::vector<std::string>{"xagent.im.v1", "xagent.im.v2"}));

  auto only_v2 = hello(R"({"protocol_version":"3.0","connector_card_id":"im.echo",
                           "supported_profiles":["xagent.im.v2","xagent.im.v2"]})");
  ASSERT_EQ(only_v2.error_code, "");
  EXPECT_EQ(only_v2.profiles, std::vector<std::string>{"xagent.im.v2"});
}

TEST(NegotiateHello, ConnectorIdIsPassedOn) {
  auto out = hello(R"({"protocol_version":"3.0","connector_card_id":"im.echo","supported_profiles":["xagent.im.v1"],
                       "connector_id":"conn_abc123"})");
  ASSERT_EQ(out.error_code, "");
  EXPECT_EQ(out.requested_connector_id, "conn_abc123");
  EXPECT_EQ(out.profiles, std::vector<std::string>{"xagent.im.v1"});
}

TEST(NegotiateHello, EmptyOrNullConnectorIdAsksForANewOne) {
  for (auto id : {R"("")", "null"}) {
    auto out = hello(std::string(R"({"protocol_version":"3.0","connector_card_id":"im.echo",)") +
                     R"("supported_profiles":["xagent.im.v1"],"connector_id":)" + id + "}");
    EXPECT_EQ(out.error_code, "") << id;
    EXPECT_EQ(out.requested_connector_id, "") << id;
  }
}

TEST(NegotiateHello, NonStringConnectorIdIsInvalidPacket) {
  for (auto id : {"42", "{}", "[]", "true"})
    expect_rejected(std::string(R"({"protocol_version":"3.0","connector_card_id":"im.echo",)") +
                        R"("supported_profiles":["xagent.im.v1"],"connector_id":)" + id + "}",
                    "invalid_packet");
}

TEST(NegotiateHello, NonObjectPayloadIsInvalidPacket) {
  for (auto p : {"[]", "\"3.0\"", "42", "null", "true", "{", "not json", R"({"protocol_version":"3.0"} x)"})
    expect_rejected(p, "invalid_packet");
}

TEST(NegotiateHello, EmptyPayloadLacksAVersion) {
  expect_rejected("", "protocol_version_unsupported");
  expect_rejected("{}", "protocol_version_unsupported");
}

TEST(NegotiateHello, UnknownFieldsAreIgnored) {
  auto out = hello(R"({"protocol_version":"3.0","connector_card_id":"im.echo","supported_profiles":["xagent.im.v2"],
                       "client":{"name":"xagent"},"extra":1})");
  EXPECT_EQ(out.error_code, "");
}

TEST(NegotiateHello, CardWithoutProfilesNeverAccepts) {
  auto out = negotiate_hello(R"({"protocol_version":"3.0","connector_card_id":"im.echo",
                                 "supported_profiles":["xagent.im.v2"]})",
                             card_id, {});
  EXPECT_EQ(out.error_code, "profile_not_supported");
}

}  // namespace
}  // namespace xconn

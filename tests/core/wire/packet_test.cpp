#include "core/wire/packet.hpp"
#include "core/wire/packet_payload.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace xconn {
namespace {

using namespace std::string_literals;

// A tool.invoke as xAgent sends it; SECRET is there to check that error messages never quote the frame.
const std::string payload_text =
    R"({"tool_id":"wechat_message_send","arguments":{"connector_channel_id":"cch_123","text":"Hello SECRET"},)"
    R"("context":{"session_id":"session_123","tool_call_id":"call_123"}})";
const std::string frame_text = R"({"schema":"xagent.connector.packet/v1","packet_id":"pkt_1","request_id":"req_1",)"
                               R"("connector_channel_id":"cch_123","type":"tool.invoke","time":1790000000000,)"
                               R"("payload":)" + payload_text + "}";

// The frame with the envelope's fields replaced: `fields` goes after the schema.
std::string frame_with(const std::string& fields) {
  return R"({"schema":"xagent.connector.packet/v1",)" + fields + "}";
}

struct result {
  std::optional<packet_view> view;
  packet_error error;
};

result decode(packet_decoder& decoder, std::string_view frame) {
  result r;
  r.view = decoder.decode(frame, r.error);
  return r;
}

result decode(std::string_view frame) {
  static packet_decoder decoder;
  return decode(decoder, frame);
}

// Decoding fails, and the message is short and does not quote the frame.
std::string refused(std::string_view frame) {
  const result r = decode(frame);
  EXPECT_FALSE(r.view) << frame;
  EXPECT_FALSE(r.error.message.empty()) << frame;
  EXPECT_LT(r.error.message.size(), 80u) << frame;
  EXPECT_EQ(r.error.message.find("SECRET"), std::string::npos) << frame;
  return r.error.message;
}

std::string nested(int levels, std::string_view open, std::string_view close) {
  std::string s;
  for (int i = 0; i < levels; ++i) s += open;
  s += "1";
  for (int i = 0; i < levels; ++i) s += close;
  return s;
}

TEST(PacketDecode, ReadsATypicalFrame) {
  const result r = decode(frame_text);
  ASSERT_TRUE(r.view) << r.error.message;
  EXPECT_EQ(r.view->packet_id, "pkt_1");
  EXPECT_EQ(r.view->type, "tool.invoke");
  EXPECT_EQ(r.view->request_id, "req_1");
  EXPECT_FALSE(r.view->reply_to);
  EXPECT_EQ(r.view->connector_channel_id, "cch_123");
  EXPECT_EQ(r.view->time, 1790000000000);
  EXPECT_EQ(r.view->payload, payload_text);
  EXPECT_FALSE(r.view->error_code);
}

TEST(PacketDecode, MinimalFrame) {
  const result r = decode(frame_with(R"("packet_id":"p","type":"ping")"));
  ASSERT_TRUE(r.view) << r.error.message;
  EXPECT_EQ(r.view->type, "ping");
  EXPECT_FALSE(r.view->request_id || r.view->reply_to || r.view->connector_channel_id || r.view->time ||
               r.view->payload || r.view->error_code);
}

TEST(PacketDecode, ReadsErrorAndReplyTo) {
  const result r = decode(frame_with(
      R"("packet_id":"p","type":"tool.invoke.ack","reply_to":"pkt_0","time":0,)"
      R"("error":{"message":"failed","code":"tool_invoke_failed","details":{"a":[1,2]}})"));
  ASSERT_TRUE(r.view) << r.error.message;
  EXPECT_EQ(r.view->reply_to, "pkt_0");
  EXPECT_EQ(r.view->time, 0);
  EXPECT_EQ(r.view->error_code, "tool_invoke_failed");
}

TEST(PacketDecode, EnvelopeRules) {
  const std::string ids = R"("packet_id":"p","type":"t")";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"packet_id":"p","type":"t"})", "schema is missing"},
      {R"({"schema":"xagent.connector.packet/v2","packet_id":"p","type":"t"})", "schema must be"},
      {R"({"schema":"xagent.connector.packet/v1 ","packet_id":"p","type":"t"})", "schema must be"},
      {R"({"schema":1,"packet_id":"p","type":"t"})", "schema must be"},
      {frame_with(R"("type":"t")"), "packet_id is missing"},
      {frame_with(R"("packet_id":"","type":"t")"), "packet_id must be a non-empty string"},
      {frame_with(R"("packet_id":7,"type":"t")"), "packet_id must be a non-empty string"},
      {frame_with(R"("packet_id":null,"type":"t")"), "packet_id must be a non-empty string"},
      {frame_with(R"("packet_id":"p")"), "type is missing"},
      {frame_with(R"("packet_id":"p","type":"")"), "type must be a non-empty string"},
      {frame_with(R"("packet_id":"p","type":1)"), "type must be a non-empty string"},
      {frame_with(R"("packet_id":"p","type":["t"])"), "type must be a non-empty string"},
      {frame_with(ids + R"(,"request_id":1)"), "request_id must be a string"},
      {frame_with(ids + R"(,"reply_to":null)"), "reply_to must be a string"},
      {frame_with(ids + R"(,"connector_channel_id":{})"), "connector_channel_id must be a string"},
      {frame_with(ids + R"(,"payload":[])"), "payload must be an object"},
      {frame_with(ids + R"(,"payload":"SECRET")"), "payload must be an object"},
      {frame_with(ids + R"(,"payload":null)"), "payload must be an object"},
      {frame_with(ids + R"(,"time":-1)"), "time must be a non-negative integer"},
      {frame_with(ids + R"(,"time":1.5)"), "time must be a non-negative integer"},
      {frame_with(ids + R"(,"time":1e3)"), "time must be a non-negative integer"},
      {frame_with(ids + R"(,"time":"1790000000000")"), "time must be a non-negative integer"},
      {frame_with(ids + R"(,"time":9223372036854775808)"), "time must be a non-negative integer"},
      {frame_with(ids + R"(,"error":{"message":"m"})"), "error must be an object with a non-empty string code"},
      {frame_with(ids + R"(,"error":{"code":1})"), "error must be an object with a non-empty string code"},
      {frame_with(ids + R"(,"error":{"code":""})"), "error must be an object with a non-empty string code"},
      {frame_with(ids + R"(,"error":{"code":"a","code":"b"})"), "error must be an object with a non-empty string code"},
      {frame_with(ids + R"(,"error":"SECRET")"), "error must be an object with a non-empty string code"},
      {frame_with(ids + R"(,"error":{"code":"c","message":5})"), "error.message must be a string"},
  };
  for (const auto& [frame, message] : cases) {
    EXPECT_NE(refused(frame).find(message), std::string::npos) << frame << " -> " << refused(frame);
  }
}

TEST(PacketDecode, UnknownKeysAreIgnored) {
  const result r =
      decode(frame_with(R"("future":{"x":[true,false,null,-1.5e-3]},"packet_id":"p","type":"t","future":1)"));
  ASSERT_TRUE(r.view) << r.error.message;
  EXPECT_EQ(r.view->packet_id, "p");
}

TEST(PacketDecode, DuplicateEnvelopeKeysAreRefused) {
  for (const char* key : {"schema", "packet_id", "type", "request_id", "reply_to", "connector_channel_id"}) {
    const std::string frame = frame_with(R"("packet_id":"p","type":"t","request_id":"r","reply_to":"x",)"
                                         R"("connector_channel_id":"c","time":1,")"s + key +
                                         R"(":"xagent.connector.packet/v1")");
    EXPECT_EQ(refused(frame), "duplicate envelope key") << key;
  }
  EXPECT_EQ(refused(frame_with(R"("packet_id":"p","type":"t","time":1,"time":1)")), "duplicate envelope key");
  EXPECT_EQ(refused(frame_with(R"("packet_id":"p","type":"t","payload":{},"payload":{})")), "duplicate envelope key");
  EXPECT_EQ(refused(frame_with(R"("packet_id":"p","type":"t","error":{"code":"c"},"error":{"code":"c"})")),
            "duplicate envelope key");
  // An escaped key is the same key.
  EXPECT_EQ(refused(frame_with(R"("packet_id":"p","type":"t","p\u0061cket_id":"q")")), "duplicate envelope key");
  // Inside the payload, duplicates are the business of whoever reads it.
  EXPECT_TRUE(decode(frame_with(R"("packet_id":"p","type":"t","payload":{"a":1,"a":2})")).view);
}

TEST(PacketDecode, InvalidJsonIsRefused) {
  const std::string ids = R"("packet_id":"p","type":"t",)";
  for (const std::string& frame : {
           R"({"schema":})"s,
           R"({"schema" "x"})"s,
           R"({"schema":"xagent.connector.packet/v1" "packet_id":"p"})"s,
           R"({schema:1})"s,
           R"({"a":1,})"s,
           R"({,})"s,
           R"({"a"})"s,
           frame_with(ids + R"("payload":{"a":tru})"),
           frame_with(ids + R"("payload":{"a":nul})"),
           frame_with(ids + R"("payload":{"a":[1 2]})"),
           frame_with(ids + R"("payload":{"a":[1,]})"),
           frame_with(ids + R"("payload":{"a":01})"),
           frame_with(ids + R"("payload":{"a":1.})"),
           frame_with(ids + R"("payload":{"a":-})"),
           frame_with(ids + R"("payload":{"a":"\x"})"),
           frame_with(ids + R"("payload":{"a":"\ud800"})"),
           frame_with(ids + R"("payload":{"a":"\u12"})"),
           frame_with(ids + R"("payload":{"a" 1})"),
           frame_with(ids + R"("payload":{"\q":1})"),
           frame_with(ids + R"("payload":{"a":[}]})"),
           frame_with(ids + R"("future":[1 2])"),
           frame_with(ids + R"("future":{"a":flase})"),
           frame_with(ids + R"("error":{"code":"c","x":[1 2]})"),
           frame_with(ids + R"("time":12x)"),
           frame_with(ids + R"("time":--1)"),
           frame_with(ids + "\"payload\":{\"a\":\"line\nbreak\"}"),
       }) {
    refused(frame);
  }
}

TEST(PacketDecode, TruncatedFramesAreRefused) {
  for (std::size_t n = 0; n < frame_text.size(); ++n) refused(std::string_view(frame_text).substr(0, n));
}

TEST(PacketDecode, EmptyFrameIsRefused) {
  refused("");
  refused("   \n");
}

TEST(PacketDecode, TopLevelMustBeAnObject) {
  for (const char* frame : {"[]", R"(["schema"])", R"("xagent.connector.packet/v1")", "42", "-1.5", "null", "true"}) {
    EXPECT_EQ(refused(frame), "packet must be a JSON object") << frame;
  }
}

TEST(PacketDecode, TrailingContentIsRefused) {
  for (const std::string& tail : {"{}"s, " x"s, "]"s, "}"s, ","s, " 1"s, R"("a")"s, "\0"s, frame_text}) {
    refused(frame_text + tail);
  }
  EXPECT_TRUE(decode(" \t\r\n" + frame_text + " \t\r\n").view);
}

TEST(PacketDecode, DepthIsBounded) {
  const std::string ids = R"("packet_id":"p","type":"t",)";
  // The envelope is level 1: a payload opening 63 levels makes 64, the limit.
  EXPECT_TRUE(decode(frame_with(ids + R"("payload":{"a":)" + nested(62, "[", "]") + "}")).view);
  EXPECT_TRUE(decode(frame_with(ids + R"("payload":)" + nested(63, R"({"a":)", "}"))).view);
  EXPECT_TRUE(decode(frame_with(ids + R"("payload":)" + nested(20, R"({"a":)", "}"))).view);
  const std::string too_deep = "packet nests deeper than 64 levels";
  EXPECT_EQ(refused(frame_with(ids + R"("payload":{"a":)" + nested(63, "[", "]") + "}")), too_deep);
  EXPECT_EQ(refused(frame_with(ids + R"("payload":)" + nested(65, R"({"a":)", "}"))), too_deep);
  EXPECT_EQ(refused(frame_with(ids + R"("future":)" + nested(64, "[", "]"))), too_deep);
  EXPECT_EQ(refused(frame_with(ids + R"("error":{"code":"c","x":)" + nested(63, "[", "]") + "}")), too_deep);
  // Far deeper than any stack would take if recursion were unbounded.
  EXPECT_EQ(refused(frame_with(ids + R"("payload":{"a":)" + nested(200000, "[", "]") + "}")), too_deep);
}

// Found by fuzz/envelope_fuzz: the dispatch reads every accepted payload with payload_of(), which threw (Boost.JSON's
// default depth is 32) for a payload the decoder let through, and nothing caught it on the I/O thread.
TEST(PacketDecode, EveryAcceptedPayloadIsReadable) {
  const std::string ids = R"("packet_id":"p","type":"chat.message",)";
  for (int levels : {31, 32, 33, 63}) {
    const result r = decode(frame_with(ids + R"("payload":)" + nested(levels, R"({"a":)", "}")));
    ASSERT_TRUE(r.view) << levels << ": " << r.error.message;
    std::optional<boost::json::object> payload;
    ASSERT_NO_THROW(payload = payload_of(*r.view)) << levels;
    ASSERT_TRUE(payload) << levels;
    EXPECT_TRUE(payload->contains("a")) << levels;
  }
  // Found by fuzz/payload_fuzz: simdjson takes an exponent of many digits that Boost.JSON refuses ("exponent
  // overflow"); payload_of says so instead of throwing.
  const result big = decode(frame_with(ids + R"("payload":{"n":1e-4242222222222222222222222})"));
  ASSERT_TRUE(big.view) << big.error.message;
  std::optional<boost::json::object> payload;
  ASSERT_NO_THROW(payload = payload_of(*big.view));
  EXPECT_FALSE(payload);
}

TEST(PacketDecode, FourMebibyteFrame) {
  std::string payload = R"({"items":[)";
  const std::string item = R"({"text":"0123456789abcdefghijklmnopqrstuvwxyz\n\u00e9","n":12345},)";
  while (payload.size() < (4u << 20)) payload += item;
  payload += "null]}";
  const std::string frame = frame_with(R"("packet_id":"p","type":"t","payload":)" + payload);
  packet_decoder decoder;
  const result r = decode(decoder, frame);
  ASSERT_TRUE(r.view) << r.error.message;
  EXPECT_EQ(r.view->payload, payload);
  // And a small one afterwards, with the same decoder.
  const result small = decode(decoder, frame_text);
  ASSERT_TRUE(small.view) << small.error.message;
  EXPECT_EQ(small.view->payload, payload_text);
}

TEST(PacketDecode, InvalidUtf8IsRefused) {
  const std::string ids = R"("packet_id":"p","type":"t",)";
  for (const std::string& bad : {"\xff"s, "\xc0\xaf"s, "\xed\xa0\x80"s, "\xe2\x82"s, "\xf4\x90\x80\x80"s}) {
    EXPECT_EQ(refused(frame_with(ids + R"("payload":{"a":")" + bad + "\"}")), "packet is not valid UTF-8");
    EXPECT_EQ(refused(frame_with(ids + R"("payload":{")" + bad + "\":1}")), "packet is not valid UTF-8");
    EXPECT_EQ(refused(frame_with(R"("packet_id":"p)" + bad + R"(","type":"t")")), "packet is not valid UTF-8");
  }
}

TEST(PacketDecode, NulBytes) {
  refused(frame_with("\"packet_id\":\"p\0q\",\"type\":\"t\""s));
  refused(frame_with("\"packet_id\":\"p\",\0\"type\":\"t\""s));
  refused("\0"s);
  // Escaped, a NUL is an ordinary character.
  const result r = decode(frame_with(R"("packet_id":"p\u0000q","type":"t")"));
  ASSERT_TRUE(r.view) << r.error.message;
  EXPECT_EQ(r.view->packet_id, "p\0q"s);
}

TEST(PacketDecode, UnicodeEscapesAreDecoded) {
  const result r = decode(frame_with(
      R"("p\u0061cket_id":"pkt_\u00e9\ud83d\ude00\"\\\/\n","type":"\u0074","payload":{"k":"\u00e9"})"));
  ASSERT_TRUE(r.view) << r.error.message;
  EXPECT_EQ(r.view->packet_id, "pkt_\xc3\xa9\xf0\x9f\x98\x80\"\\/\n");
  EXPECT_EQ(r.view->type, "t");
  EXPECT_EQ(r.view->payload, R"({"k":"\u00e9"})");  // the payload stays raw
  const result raw = decode(frame_with("\"packet_id\":\"pkt_\xc3\xa9\",\"type\":\"t\""));
  ASSERT_TRUE(raw.view);
  EXPECT_EQ(raw.view->packet_id, "pkt_\xc3\xa9");
}

TEST(PacketDecode, IdsAreEchoedWhenReadable) {
  // A broken envelope rule before and after the ids: both are still read.
  for (const std::string& frame : {
           R"({"schema":"nope","request_id":"req_9","packet_id":"pkt_9","type":"t"})"s,
           R"({"payload":[],"request_id":"req_9","packet_id":"pkt_9","type":"t"})"s,
           R"({"request_id":"req_9","packet_id":"pkt_9","type":""})"s,
           R"({"request_id":"req_9","packet_id":"pkt_9","type":"t"})"s,
       }) {
    const result r = decode(frame);
    ASSERT_FALSE(r.view) << frame;
    EXPECT_EQ(r.error.request_id, "req_9") << frame;
    EXPECT_EQ(r.error.packet_id, "pkt_9") << frame;
  }
  // Invalid JSON after the ids: they were read before it.
  result r = decode(R"({"request_id":"req_9","packet_id":"pkt_9","payload":{"a":tru}})");
  ASSERT_FALSE(r.view);
  EXPECT_EQ(r.error.message, "packet is not valid JSON");
  EXPECT_EQ(r.error.request_id, "req_9");
  EXPECT_EQ(r.error.packet_id, "pkt_9");
  // Not strings, or not reached: not echoed; and nothing stale from an earlier frame.
  r = decode(R"({"request_id":9,"packet_id":["pkt_9"],"type":"t"})");
  EXPECT_FALSE(r.error.request_id);
  EXPECT_FALSE(r.error.packet_id);
  r = decode(R"({"payload":{"a":tru},"request_id":"req_9","packet_id":"pkt_9"})");
  EXPECT_FALSE(r.error.request_id);
  EXPECT_FALSE(r.error.packet_id);
}

TEST(PacketDecode, PayloadSliceIsTheOriginalText) {
  const std::string payload = "{ \"a\" : [1, 2.5e1, \"}\\\"]\"] ,\n\t\"b\":{\"c\":null} }";
  for (const std::string& frame : {
           frame_with(R"("packet_id":"p","type":"t","payload" : )" + payload + " \n,\"time\":1"),
           frame_with(R"("packet_id":"p","type":"t","payload":)" + payload + " \r\n"),
       }) {
    const result r = decode(frame);
    ASSERT_TRUE(r.view) << r.error.message;
    EXPECT_EQ(r.view->payload, payload);
  }
  const result empty = decode(frame_with(R"("packet_id":"p","type":"t","payload":{})"));
  ASSERT_TRUE(empty.view);
  EXPECT_EQ(empty.view->payload, "{}");
}

TEST(PacketDecode, DecoderIsReusable) {
  packet_decoder decoder;
  for (int i = 0; i < 1000; ++i) {
    const std::string id = "pkt_" + std::to_string(i);
    const std::string payload = R"({"i":)" + std::to_string(i) + std::string(i % 37, ' ') + "}";
    const std::string frame = (i % 5 == 4)
                                  ? R"({"schema":"bad","packet_id":")" + id + R"(","type":"t"})"
                                  : frame_with(R"("packet_id":")" + id + R"(","type":"t","payload":)" + payload);
    const result r = decode(decoder, frame);
    if (i % 5 == 4) {
      ASSERT_FALSE(r.view);
      EXPECT_EQ(r.error.packet_id, id);
    } else {
      ASSERT_TRUE(r.view) << r.error.message;
      EXPECT_EQ(r.view->packet_id, id);
      EXPECT_EQ(r.view->payload, payload);
    }
  }
}

TEST(PacketDecode, RandomMutationsNeverCrash) {
  std::mt19937 rng(20260729);
  const std::string alphabet = "{}[]:,\"\\ 0123456789.eE-+tfnu\x00\x80\xff"s;
  int accepted = 0;
  packet_decoder decoder;
  for (int i = 0; i < 2000; ++i) {
    std::string frame = frame_text;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !frame.empty(); ++e) {
      const std::size_t at = rng() % frame.size();
      const char c = alphabet[rng() % alphabet.size()];
      switch (rng() % 4) {
        case 0: frame[at] = c; break;
        case 1: frame.insert(frame.begin() + static_cast<std::ptrdiff_t>(at), c); break;
        case 2: frame.erase(at, 1 + rng() % 8); break;
        default: frame.insert(at, frame.substr(rng() % frame.size(), rng() % 16)); break;
      }
    }
    const result r = decode(decoder, frame);
    if (!r.view) continue;
    ++accepted;
    // What the decoder accepts is JSON for an independent parser too, and so is the payload slice.
    boost::json::error_code ec;
    boost::json::parse(frame, ec);
    EXPECT_FALSE(ec) << frame;
    if (r.view->payload) {
      EXPECT_TRUE(boost::json::parse(*r.view->payload, ec).is_object()) << frame;
      EXPECT_FALSE(ec) << frame;
    }
  }
  EXPECT_GT(accepted, 0);  // some mutations land in strings and keep the frame valid
}

TEST(PacketEncode, RoundTrip) {
  outgoing_packet out;
  out.type = "tool.invoke.ack";
  out.request_id = "req_1";
  out.reply_to = "pkt_1";
  out.connector_channel_id = "cch_1";
  out.payload = boost::json::object{{"ok", true}, {"text", "h\u00e9llo \"q\"\n"}, {"n", {1, 2.5, nullptr}}};
  out.error_code = "tool_invoke_failed";
  out.error_message = "it failed";
  const std::string text = encode_packet(out);
  EXPECT_EQ(text.rfind(R"({"schema":"xagent.connector.packet/v1","packet_id":"pkt_)", 0), 0u) << text;

  packet_decoder decoder;
  const result r = decode(decoder, text);
  ASSERT_TRUE(r.view) << r.error.message;
  EXPECT_EQ(r.view->packet_id.size(), 4u + 22u);
  EXPECT_EQ(r.view->type, out.type);
  EXPECT_EQ(r.view->request_id, out.request_id);
  EXPECT_EQ(r.view->reply_to, out.reply_to);
  EXPECT_EQ(r.view->connector_channel_id, out.connector_channel_id);
  EXPECT_EQ(r.view->error_code, out.error_code);
  ASSERT_TRUE(r.view->time);
  EXPECT_GT(*r.view->time, 1'600'000'000'000);
  ASSERT_TRUE(r.view->payload);
  EXPECT_EQ(boost::json::parse(*r.view->payload), boost::json::value(*out.payload));

  // The whole envelope, in its key order.
  const boost::json::object all = boost::json::parse(text).as_object();
  std::vector<std::string> keys;
  for (const auto& kv : all) keys.emplace_back(kv.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"schema", "packet_id", "request_id", "reply_to", "connector_channel_id",
                                             "type", "time", "payload", "error"}));
  EXPECT_EQ(all.at("error"), (boost::json::object{{"code", "tool_invoke_failed"}, {"message", "it failed"}}));
}

TEST(PacketEncode, EveryEnvelopeStringIsEscapedAndALargePayloadComesWhole) {
  // Every byte below 0x20, quotes, backslashes and UTF-8 in the strings the envelope appends itself.
  std::string hostile = "q\"b\\s/\xc3\xa9\xe2\x82\xac";
  for (char c = 0; c < 0x20; ++c) hostile.push_back(c);
  outgoing_packet out;
  out.type = "tool.invoke.ack";
  out.request_id = hostile;
  out.reply_to = hostile + "r";
  out.connector_channel_id = hostile + "c";
  out.error_code = hostile + "e";
  out.error_message = hostile + "m";
  boost::json::array big;
  for (int i = 0; i < 5000; ++i) big.emplace_back("item " + std::to_string(i) + " \u00e9\"");
  out.payload = boost::json::object{{"big", big}};
  const std::string text = encode_packet(out);
  boost::system::error_code ec;
  auto all = boost::json::parse(text, ec);
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(all.at("request_id").as_string(), hostile);
  EXPECT_EQ(all.at("reply_to").as_string(), hostile + "r");
  EXPECT_EQ(all.at("connector_channel_id").as_string(), hostile + "c");
  EXPECT_EQ(all.at("error").at("code").as_string(), hostile + "e");
  EXPECT_EQ(all.at("error").at("message").as_string(), hostile + "m");
  EXPECT_EQ(all.at("payload"), boost::json::value(*out.payload));
  packet_decoder decoder;
  const result r = decode(decoder, text);
  ASSERT_TRUE(r.view) << r.error.message;
  EXPECT_EQ(r.view->request_id, hostile);
}

TEST(PacketEncode, AByteToEscapeIsFoundAtEveryPositionOfAWord) {
  // The check reads eight bytes a step, then the tail: each special byte at each place of two words and a tail.
  for (char special : {'"', '\\', '\0', '\x1f', '\n'}) {
    for (std::size_t at = 0; at < 19; ++at) {
      std::string id(19, 'a');
      id[at] = special;
      outgoing_packet out;
      out.type = "pong";
      out.request_id = id;
      boost::system::error_code ec;
      auto all = boost::json::parse(encode_packet(out), ec);
      ASSERT_FALSE(ec) << int(special) << " at " << at;
      EXPECT_EQ(all.at("request_id").as_string(), id) << int(special) << " at " << at;
    }
  }
}

TEST(PacketEncode, ARawMemberIsAppendedToThePayloadAsItIs) {
  outgoing_packet out;
  out.type = "tool.invoke.ack";
  out.payload = boost::json::object{{"tool_id", "echo_reverse"}};
  out.raw_member_name = "result";
  out.raw_member_json = R"( {"text":"cba","n":[1, 2]} )";
  auto all = boost::json::parse(encode_packet(out));
  EXPECT_EQ(all.at("payload"), boost::json::parse(R"({"tool_id":"echo_reverse","result":{"text":"cba","n":[1,2]}})"));
  out.payload = boost::json::object{};
  all = boost::json::parse(encode_packet(out));
  EXPECT_EQ(all.at("payload"), boost::json::parse(R"({"result":{"text":"cba","n":[1,2]}})"));
}

TEST(PacketEncode, OmitsEmptyFieldsAndKeepsGivenIdAndTime) {
  outgoing_packet out;
  out.type = "pong";
  out.packet_id = "pkt_fixed";
  out.time_ms = 0;
  EXPECT_EQ(encode_packet(out),
            R"({"schema":"xagent.connector.packet/v1","packet_id":"pkt_fixed","type":"pong","time":0})");
  out.packet_id.clear();
  EXPECT_NE(encode_packet(out), encode_packet(out));  // a fresh packet_id each time
}

TEST(PacketReply, EchoesTheRequest) {
  const result r = decode(frame_text);
  ASSERT_TRUE(r.view);
  const outgoing_packet ack = reply_to(*r.view, "tool.invoke.ack");
  EXPECT_EQ(ack.type, "tool.invoke.ack");
  EXPECT_EQ(ack.request_id, "req_1");
  EXPECT_EQ(ack.reply_to, "pkt_1");
  EXPECT_EQ(ack.connector_channel_id, "cch_123");
  EXPECT_TRUE(ack.packet_id.empty());
  EXPECT_LT(ack.time_ms, 0);
  EXPECT_FALSE(ack.payload);

  const result ping = decode(frame_with(R"("packet_id":"pkt_2","type":"ping")"));
  ASSERT_TRUE(ping.view);
  const outgoing_packet pong = reply_to(*ping.view, "pong");
  EXPECT_TRUE(pong.request_id.empty());
  EXPECT_EQ(pong.reply_to, "pkt_2");
  EXPECT_TRUE(pong.connector_channel_id.empty());
}

}  // namespace
}  // namespace xconn

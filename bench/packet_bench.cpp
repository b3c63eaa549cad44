// Envelope decoding against a full Boost.JSON DOM parse of the same frame (the ratio is what matters: both run
// in the same process on the same machine), and encoding a typical ack against appending its bytes by hand.
#include "core/wire/packet.hpp"

#include <benchmark/benchmark.h>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <stdexcept>
#include <string>

namespace {

// A tool.invoke as xAgent sends it (~330 bytes).
const std::string frame =
    R"({"schema":"xagent.connector.packet/v1","packet_id":"pkt_7Hq2mXcV9aLr3TzK1bNp0s",)"
    R"("request_id":"req_4f8a2c9e1b7d",)"
    R"("connector_channel_id":"cch_Ab3dE5gH7jK9mN1pQ3sT5v","type":"tool.invoke","time":1790000000000,)"
    R"("payload":{"tool_id":"wechat_message_send","arguments":{"connector_channel_id":"cch_Ab3dE5gH7jK9mN1pQ3sT5v",)"
    R"("text":"Hello, see you at 3 pm \u2014 bring the report"},)"
    R"("context":{"session_id":"session_123","tool_call_id":"call_123"}}})";

void BM_decode_envelope(benchmark::State& state) {
  xconn::packet_decoder decoder;
  xconn::packet_error error;
  for (auto _ : state) {
    auto view = decoder.decode(frame, error);
    if (!view) throw std::runtime_error(error.message);
    benchmark::DoNotOptimize(view);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * frame.size()));
}
BENCHMARK(BM_decode_envelope);

void BM_boost_json_parse(benchmark::State& state) {
  for (auto _ : state) {
    boost::json::value v = boost::json::parse(frame);
    benchmark::DoNotOptimize(v);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * frame.size()));
}
BENCHMARK(BM_boost_json_parse);

void BM_encode_ack(benchmark::State& state) {
  xconn::packet_decoder decoder;
  xconn::packet_error error;
  const auto request = decoder.decode(frame, error);
  if (!request) throw std::runtime_error(error.message);
  const boost::json::object result{{"ok", true}, {"message_id", "msg_123"}};
  for (auto _ : state) {
    xconn::outgoing_packet ack = xconn::reply_to(*request, "tool.invoke.ack");
    ack.payload = result;
    std::string text = xconn::encode_packet(ack);
    benchmark::DoNotOptimize(text);
  }
}
BENCHMARK(BM_encode_ack);

// The baseline of encoding: the same ack's bytes appended by hand into one string, with no JSON library (what
// producing those bytes costs at the least: the envelope's ids and time included).
void BM_append_ack_baseline(benchmark::State& state) {
  for (auto _ : state) {
    std::string text;
    text.reserve(256);
    text += R"({"schema":"xagent.connector.packet/v1","packet_id":")";
    text += "pkt_7Hq2mXcV9aLr3TzK1bNp0s";
    text += R"(","request_id":"req_4f8a2c9e1b7d","reply_to":"pkt_7Hq2mXcV9aLr3TzK1bNp0s",)";
    text += R"("connector_channel_id":"cch_Ab3dE5gH7jK9mN1pQ3sT5v","type":"tool.invoke.ack","time":)";
    text += std::to_string(1790000000000LL);
    text += R"(,"payload":{"ok":true,"message_id":"msg_123"}})";
    benchmark::DoNotOptimize(text);
  }
}
BENCHMARK(BM_append_ack_baseline);

}  // namespace

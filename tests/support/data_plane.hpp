// Steps on the data plane shared by the channel, auth, tool and persistence tests: a socket after its hello that
// sends requests, matches answers by request_id (keeping whatever else arrives), and the usual channel steps.
// Every packet received and every connection descriptor in it is validated against the spec's schemas.
#pragma once

#include "support/wire_client.hpp"

#include <boost/json.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace xconn::test {

// A token echo accepts. Its account hint is "echo-" + 6 hex digits of an HMAC keyed by a secret of the store, so a
// test knows its form, not its value: an expected hint of "echo-??????" matches any hint of that form.
inline const std::string good_token = "tok-good-1";
inline const std::string good_token_hint = "echo-??????";

class dp_client {
 public:
  // Connects to /connectors/{plugin}/ws and says hello with the plugin's card id and both IM profiles (overrides
  // merged into the hello payload). nullptr when the upgrade or the hello fails.
  static std::unique_ptr<dp_client> connect(unsigned short port, const std::string& key,
                                            const std::string& plugin = "echo",
                                            const boost::json::object& hello_overrides = {});
  // Validates every packet and descriptor received against the schemas (one checker run per schema).
  ~dp_client();
  dp_client(const dp_client&) = delete;
  dp_client& operator=(const dp_client&) = delete;

  ws_client& ws() { return *ws_; }
  const std::string& connector_id() const { return connector_id_; }
  const boost::json::object& card() const { return card_; }  // the plugin's connector-card.json
  const std::vector<std::string>& offered_profiles() const { return profiles_; }

  // Sends a packet (make_packet); returns it, so that its answer can be awaited later.
  boost::json::object send(const std::string& type, boost::json::object payload = {},
                           const std::string& channel = "");
  void send_packet(const boost::json::object& packet);
  // The packet answering request (matched by request_id), from what already arrived or what arrives before the
  // deadline; everything else is kept for next_push. Checks that it echoes request_id and reply_to.
  std::optional<boost::json::object> answer(const boost::json::object& request,
                                            std::chrono::milliseconds deadline = std::chrono::seconds(5));
  std::optional<boost::json::object> request(const std::string& type, boost::json::object payload = {},
                                             const std::string& channel = "",
                                             std::chrono::milliseconds deadline = std::chrono::seconds(5));
  // The first kept or arriving packet of this type (and channel, when given) that answers no request of ours.
  std::optional<boost::json::object> next_push(const std::string& type, const std::string& channel = "",
                                               std::chrono::milliseconds deadline = std::chrono::seconds(5));
  std::vector<boost::json::object>& kept() { return kept_; }
  const std::vector<std::string>& received() const { return received_; }  // every text frame, as it came

  // channel.open with this envelope id ("" sends none); the ack.
  std::optional<boost::json::object> open_channel(const std::string& id = "", bool send_empty_id = false);
  // The id from channel.open, "" when the open failed.
  std::string open(const std::string& id = "");
  std::optional<boost::json::object> auth_start(const std::string& channel, const std::string& flow_id,
                                                std::optional<boost::json::object> input);
  // auth.start with echo_token; the ack.
  std::optional<boost::json::object> authenticate(const std::string& channel, const std::string& token = good_token);
  // A new channel signed in with echo_token; "" on failure.
  std::string open_authenticated(const std::string& token = good_token);
  // A new channel signed in through a form flow with this input; "" (and a test failure) when it is not.
  std::string open_signed_in(const std::string& flow_id, const boost::json::object& input);
  std::optional<boost::json::object> invoke(const std::string& channel, const std::string& tool_id,
                                            boost::json::object arguments, boost::json::object context = {},
                                            std::chrono::milliseconds deadline = std::chrono::seconds(10));
  // connection.descriptor.get; the ack.
  std::optional<boost::json::object> get_descriptor(const std::string& channel);

 private:
  dp_client() = default;
  std::optional<boost::json::object> receive_one(std::chrono::steady_clock::time_point until);

  std::unique_ptr<ws_client> ws_;
  std::string connector_id_;
  boost::json::object card_;
  std::vector<std::string> profiles_;
  std::vector<boost::json::object> kept_;
  std::vector<std::string> received_;
};

// A string member ("" when absent or not a string).
std::string text_of(const boost::json::object& o, const char* key);
// The envelope error code ("" when none).
std::string error_code(const boost::json::object& packet);
// payload (an empty object when absent or not an object).
boost::json::object payload_of(const boost::json::object& packet);
// payload.connection_descriptor (an empty object when absent).
boost::json::object descriptor_in(const boost::json::object& packet);
// The connection status of the descriptor pushes channel receives, read until one says want or the deadline
// passes; the last one read ("" when none came).
std::string last_pushed_status(dp_client& c, const std::string& channel, const std::string& want,
                               std::chrono::milliseconds deadline);
// "cch_" + 22 base62, "auth_" + 22 base62, ...
bool is_random_id(const std::string& text, const std::string& prefix);
// The card's tool ids, in card order.
std::vector<std::string> card_tool_ids(const boost::json::object& card);

// What a descriptor must say (docs/protocol.md, "Connection descriptors").
struct expected_descriptor {
  std::string channel_id;
  std::string connector_id;
  std::string status;                  // created, authenticating, connected, degraded, offline
  std::vector<std::string> profiles;   // negotiated, compared as a set
  bool authenticated = false;          // tools: unavailable/unknown, else available/granted or not_supported
  std::string display_name = "Echo not bound";
  std::string account_hint;            // "" when it must be absent
  std::string card_id = "im.echo";
  std::string target_type = "im";
  std::string provider = "echo";
  std::string label = "Echo";
};
// echo's descriptor of a signed-out channel (created), and of one signed in with echo_token (connected).
expected_descriptor signed_out_descriptor(const std::string& channel_id, const std::string& connector_id,
                                          std::vector<std::string> profiles);
expected_descriptor signed_in_descriptor(const std::string& channel_id, const std::string& connector_id,
                                         std::vector<std::string> profiles,
                                         const std::string& account_hint = good_token_hint);

// Checks every field with gtest EXPECTs (the schema is checked for everything a dp_client receives); `where`
// names the step in the messages.
void expect_descriptor(const boost::json::value& descriptor, const expected_descriptor& e,
                       const boost::json::object& card, const std::string& where);

}  // namespace xconn::test

// The wechat plugin's class (docs/wechat.md), on the adapter layer: a WeChat bot account signed in by QR code per
// channel (one bot, one channel), one getupdates long poll per bot (a host shared consumer) whose cursor is committed
// with the messages it produced, media fetched from the CDN and decrypted into the host's file store at once, and
// replies to the sender of the message they answer with that sender's latest context_token. Its parts live in their
// own files: hooks, bindings and restore (wechat_plugin.cpp), the QR sign-in (wechat_sign_in.cpp), the long poll
// (wechat_poller.cpp), finals, tools and typing (wechat_replies.cpp).
#pragma once

#include "ilink_api.hpp"
#include "wechat_config.hpp"

#include <xconn/adapter/channel_checks.hpp>
#include <xconn/adapter/health_board.hpp>
#include <xconn/adapter/network_adapter.hpp>
#include <xconn/adapter/poll_loop.hpp>
#include <xconn/adapter/shared_consumers.hpp>

#include <boost/json.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace wechat {

// get_updates_buf: opaque, "" from the start of what WeChat still keeps.
struct update_cursor {
  std::string buf;
  std::string kept() const { return buf; }
};

class wechat_plugin final : public xconn::adapter::network_adapter {
 public:
  static constexpr bool verifies_restored_channels = true;
  static constexpr std::size_t max_media_bytes = 100u << 20;

  static std::string manifest();
  static std::string validate_config(std::string_view section_json);

  wechat_plugin(xconn::sdk::host host, std::string_view section_json);
  ~wechat_plugin() override { halt(); }

  void auth_start(std::string_view channel, std::string_view flow_id, std::string_view session,
                  std::string_view input_json, completion done) override;
  void auth_status(std::string_view channel, std::string_view flow_id, std::string_view session, bool refresh,
                   completion done) override;
  void auth_cancel(std::string_view channel, std::string_view flow_id, std::string_view session,
                   completion done) override;
  void auth_logout(std::string_view channel, completion done) override;
  void channel_restore(std::string_view channel, std::string_view, std::string_view credentials_json,
                       completion done) override;
  void channel_end(std::string_view channel, std::string_view reason, completion done) override;
  void consumer_stop(std::string_view key, completion done) override;
  void send(std::string_view channel, std::string_view reply_json, completion done) override;
  void activity(std::string_view channel, std::string_view status, std::string_view, completion done) override;
  void invoke_tool(std::string_view channel, std::string_view tool_id, std::string_view arguments_json,
                   std::string_view, completion done) override;

 private:
  // A signed-in bot, on the loop only.
  struct binding {
    std::string channel;
    std::string token;    // the bearer token: memory and the host's sealed credentials only
    std::string bot_id;   // ilink_bot_id
    std::string user_id;  // ilink_user_id: who scanned, the recipient when nobody wrote yet
    std::string baseurl;  // the bot's API base
    std::string key;      // its shared consumer: consumer_key(bot_id)
  };
  // A QR sign-in in progress, by auth session id, on the loop only.
  struct qr_run {
    std::string channel;
    std::string qrcode, qr_text;
    endpoint poll_at;
    int refreshes = 0;     // new codes after WeChat said expired (at most 3)
    bool scanned = false;
    std::int64_t expires_at = 0;
  };
  struct poller : xconn::adapter::poll_loop<update_cursor> {
    using poll_loop::poll_loop;
    binding bot;
    std::chrono::milliseconds hold{35000};  // how long WeChat holds a poll (its longpolling_timeout_ms)
  };
  // Where a reply goes: the person and the context_token of their latest message.
  struct recipient {
    std::string user;
    std::string context_token;
  };

  void on_halting() override;
  void on_halted() override { api_->close_idle(); }

  // wechat_plugin.cpp: bindings and restore.
  std::string bot_key(const std::string& bot_id) const;
  binding* bound(const std::string& channel);
  awaitable<void> sign_out(std::string channel);
  void bind(binding b);
  void expire(const binding& b);
  awaitable<void> restore(std::string channel, std::string token, completion done);
  awaitable<xconn::adapter::check_verdict> verify(const std::string& channel);

  // wechat_sign_in.cpp: the QR flow.
  awaitable<void> start_qr(std::string channel, std::string session, completion done);
  awaitable<void> poll_qr(std::string channel, std::string session, bool refresh, completion done);
  awaitable<std::optional<std::string>> new_code(qr_run& run);
  std::string pending_answer(const qr_run& run, std::string_view status) const;
  awaitable<void> confirmed(std::string session, boost::json::object answer, completion done);

  // wechat_poller.cpp: the long poll of one bot and its pages' emits.
  awaitable<void> poll(std::shared_ptr<poller> p);
  awaitable<poller::page> poll_page(std::shared_ptr<poller> p, update_cursor cursor);
  awaitable<std::optional<std::string>> fetch_media(const media_item& media);

  // wechat_replies.cpp: finals, tools and typing.
  recipient recipient_of(const binding& b, const std::string& user) const;
  awaitable<ilink_reply> send_msg(binding b, boost::json::object msg);
  // What a failed send is for the host: its code and whether asking again may help (-14 expires the channel).
  std::pair<std::string, bool> refusal_of(const binding& b, const ilink_reply& r);
  awaitable<void> deliver(binding b, boost::json::object reply, completion done);
  // nullopt: no such file on the channel. facts gets media_type, filename and byte_size.
  awaitable<std::optional<ilink_reply>> send_file(binding b, recipient to, std::string client_id,
                                                  std::string file_ref, boost::json::object* facts);
  awaitable<void> message_tool(binding b, std::string text, completion done);
  awaitable<void> media_tool(binding b, std::string file_ref, std::string text, completion done);
  awaitable<void> typing(binding b, bool on);

  settings settings_;
  std::unique_ptr<ilink_api> api_;
  std::map<std::string, binding> channels_;  // signed-in channels, by channel id
  std::map<std::string, binding> restored_;  // restored channels until verified
  std::map<std::string, qr_run> qr_runs_;    // by auth session id
  xconn::adapter::shared_consumers<poller> pollers_;  // by bot key
  xconn::adapter::health_board health_;
  xconn::adapter::channel_checks checks_;
};

}  // namespace wechat

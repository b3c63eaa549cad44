// The telegram plugin's class (docs/adapters.md "telegram"), on the adapter layer: a bot bound to a chat per channel,
// one getUpdates long poll per bot token shared by its channels, restored channels checked through channel_checks,
// every Bot API call on the adapter's own loop. Its parts live in their own files: the hooks, sign-in and restore
// (telegram_plugin.cpp), text sends and live edits (telegram_live.cpp), media (telegram_media.cpp) and the poller
// (telegram_poller.cpp).
#pragma once

#include "bot_api.hpp"
#include "telegram_config.hpp"
#include "telegram_offset.hpp"
#include "telegram_updates.hpp"

#include <xconn/adapter/channel_checks.hpp>
#include <xconn/adapter/health_board.hpp>
#include <xconn/adapter/live_messages.hpp>
#include <xconn/adapter/media_files.hpp>
#include <xconn/adapter/network_adapter.hpp>
#include <xconn/adapter/poll_loop.hpp>
#include <xconn/adapter/shared_consumers.hpp>

#include <boost/json.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace telegram {

class telegram_plugin final : public xconn::adapter::network_adapter {
 public:
  template <class T>
  using awaitable = boost::asio::awaitable<T>;
  static constexpr auto call_timeout = std::chrono::seconds(15);
  static constexpr std::size_t max_media_bytes = 50u << 20;  // above the Bot API's own 20 MB download limit
  static constexpr bool verifies_restored_channels = true;

  static std::string manifest();
  static std::string validate_config(std::string_view section_json);

  telegram_plugin(xconn::sdk::host host, std::string_view section_json);
  ~telegram_plugin() override { halt(); }

  void auth_start(std::string_view channel, std::string_view flow_id, std::string_view, std::string_view input_json,
                  completion done) override;
  void channel_restore(std::string_view channel, std::string_view, std::string_view credentials_json,
                       completion done) override;
  void auth_logout(std::string_view channel, completion done) override;
  void channel_end(std::string_view channel, std::string_view reason, completion done) override;
  void consumer_stop(std::string_view key, completion done) override;
  void send(std::string_view channel, std::string_view reply_json, completion done) override;
  void update(std::string_view channel, std::string_view message_id, std::string_view text_so_far,
              completion done) override;
  void activity(std::string_view channel, std::string_view status, std::string_view, completion done) override;
  void invoke_tool(std::string_view channel, std::string_view tool_id, std::string_view arguments_json,
                   std::string_view, completion done) override;

 private:
  struct binding {
    std::string channel;
    std::string token;
    std::string key;      // token_key(token): the shared poller and the token's rate limit
    std::string chat_id;  // Telegram's integer id, as text
  };
  struct poller : xconn::adapter::poll_loop<update_offset> {
    using poll_loop::poll_loop;
    std::string token;
    std::string key;
  };

  void on_halting() override;
  void on_halted() override { api_->close_idle(); }  // its sockets belong to the loop, dropped by now

  // telegram_plugin.cpp: bindings, sign-in, restore.
  std::string token_key(std::string_view token) const;
  // The channel's binding in channels_ or restored_ (read under mutex_).
  std::optional<binding> binding_of(const std::string& channel, const std::map<std::string, binding>& in);
  void forget(const std::string& channel);
  void bind(binding b);
  void connect(const std::string& channel, const std::string& token, const std::string& chat_id);
  awaitable<void> sign_in(std::string channel, std::string token, std::string chat_input, completion done);
  awaitable<xconn::adapter::check_verdict> verify(const std::string& channel);

  // telegram_live.cpp: text sends, live edits, failures.
  awaitable<api_reply> send_message(const binding& b, const std::string& text,
                                    std::chrono::steady_clock::time_point deadline);
  awaitable<api_reply> edit_message(const binding& b, const std::string& telegram_id, const std::string& text);
  std::string failure_code(const binding& b, const api_reply& r);
  std::string send_refused(const binding& b, const api_reply& r, bool part_sent);
  awaitable<void> chat_action(binding b);
  awaitable<void> live_update(binding b, std::string message_id, std::string text);
  awaitable<std::optional<std::string>> create_live(binding b, std::string text);
  awaitable<bool> edit_live(binding b, std::string telegram_id, std::string text);
  awaitable<void> send_text(binding b, std::string text, std::string message_id, completion done);
  awaitable<void> send_tool(binding b, std::string text, completion done);

  // telegram_media.cpp: files both ways.
  awaitable<api_reply> send_file(const binding& b, const boost::json::object& item, const std::string& caption,
                                 std::string* media_type);
  awaitable<void> send_files(binding b, std::string text, boost::json::array files, completion done);
  awaitable<void> send_media_tool(binding b, boost::json::object args, completion done);

  // telegram_poller.cpp: the long poll of one token and its pages' emits.
  std::vector<std::string> channels_of(const std::string& key, const std::string& chat_id);
  awaitable<void> poll(std::shared_ptr<poller> p);
  awaitable<poller::page> poll_page(std::shared_ptr<poller> p, update_offset offset);

  settings settings_;
  std::unique_ptr<bot_api> api_;
  std::mutex mutex_;
  std::map<std::string, binding> channels_;    // signed-in channels of this run, by channel id
  std::map<std::string, binding> restored_;    // restored channels until verified: their token and chat
  xconn::adapter::live_messages live_{*this, std::chrono::seconds(1)};  // by channel "\n" message id, per chat
  xconn::adapter::shared_consumers<poller> pollers_;  // by token key; the host's references are made in bind()
  xconn::adapter::health_board health_;
  xconn::adapter::channel_checks checks_;
};

}  // namespace telegram

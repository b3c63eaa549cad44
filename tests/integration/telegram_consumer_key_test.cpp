// The telegram plugin's keys after the consumer keys became the host's HMAC (ABI 1.5): a store an older build left
// (the channel holding "bot-" + the bare SHA-256 of the token, the bot's offset kept under that key) keeps working.
// The restored channel holds the new key and releases the old one, the offset is carried over (the first poll
// confirms what was read before the restart) and no trace of the bare hash stays in the store.
#include "core/base/crypto.hpp"
#include "core/channels/consumer_registry.hpp"
#include "core/store/plugin_kv.hpp"
#include "support/data_plane.hpp"
#include "support/fake_telegram.hpp"
#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

#include <future>
#include <set>

namespace xconn::test {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

const std::string bot_token = "654321:AAH-planted-upgrade-token-7c2d";
constexpr long long bot = 654321;
constexpr long long chat = -1009876543210;

std::unique_ptr<store> open_kept(const std::filesystem::path& path) {
  auto db = store::open({path.string(), 1ull << 26,
                         {std::string(consumer_registry::database), std::string(plugin_kv::database)}});
  if (!db) ADD_FAILURE() << db.error();
  return db ? std::move(*db) : nullptr;
}

// The consumer keys channel holds and the plugin's key-value keys, in a stopped server's store.
std::set<std::string> consumer_keys(store& db, const std::string& channel) {
  std::set<std::string> keys;
  const std::string prefix = "telegram\n" + channel + "\n";
  db.scan(consumer_registry::database, prefix, [&](std::string_view k, std::string_view) {
    keys.emplace(k.substr(prefix.size()));
    return true;
  });
  return keys;
}
std::set<std::string> kv_keys(store& db) {
  std::set<std::string> keys;
  const auto prefix = plugin_kv_key("telegram", "");
  db.scan(plugin_kv::database, prefix, [&](std::string_view k, std::string_view) {
    keys.emplace(k.substr(prefix.size()));
    return true;
  });
  return keys;
}

TEST(telegram_upgrade, a_channel_and_offset_kept_under_the_bare_token_hash_move_to_the_hmac_key) {
  fake_telegram api;
  api.add_bot(bot_token, bot, "upgrade_bot");
  api.add_chat(chat, "supergroup", "Upgrade room");
  server_fixture server({"telegram.so"}, [&](config& c) {
    c.connectors["telegram"].config = {{"api_base_url", api.base_url()}, {"poll_timeout_s", 1}};
  });
  server.start();
  auto dp = dp_client::connect(server.port(), server.key(), "telegram");
  ASSERT_TRUE(dp);
  auto channel =
      dp->open_signed_in("telegram_bot_binding", {{"bot_token", bot_token}, {"chat_id", std::to_string(chat)}});
  ASSERT_FALSE(channel.empty());
  auto connector_id = dp->connector_id();
  auto read_id = api.add_update(bot_token, telegram_text(chat, "supergroup", 1, 555, "Bo", "before"));
  auto first = dp->next_push("chat.message", channel, 10s);
  ASSERT_TRUE(first);
  dp->send("chat.message.ack", {{"message_id", payload_of(*first).at("message_id")}, {"status", "accepted"}}, channel);
  const std::string legacy = "bot-" + sha256_hex(bot_token).substr(0, 16);
  std::string key;
  ASSERT_TRUE(wait_until([&] {  // the offset past the update read is kept with its emit
    auto polls = api.state()["polls"].as_object()[std::to_string(bot)].as_object()["offsets"].as_array();
    return !polls.empty() && polls.back().to_number<long long>() == read_id + 1;
  }, 10s));
  dp.reset();
  server.stop();
  const auto store_path = server.dir().path() / "store";
  {  // The store as an older build left it.
    auto db = open_kept(store_path);
    ASSERT_TRUE(db);
    auto held = consumer_keys(*db, channel);
    ASSERT_EQ(held.size(), 1u);
    key = *held.begin();
    ASSERT_EQ(key.size(), 4 + 64u) << "the host's HMAC, not a bare hash: " << key;
    EXPECT_NE(key.substr(4), sha256_hex(bot_token));
    auto offset = db->get(plugin_kv::database, plugin_kv_key("telegram", "offset/" + key));
    ASSERT_TRUE(offset);
    write_batch old;
    old.erase(std::string(consumer_registry::database), consumer_registry::record_key("telegram", channel, key));
    old.put(std::string(consumer_registry::database), consumer_registry::record_key("telegram", channel, legacy), "");
    old.erase(std::string(plugin_kv::database), plugin_kv_key("telegram", "offset/" + key));
    old.put(std::string(plugin_kv::database), plugin_kv_key("telegram", "offset/" + legacy), *offset);
    std::promise<std::error_code> committed;
    db->write(std::move(old), [&](std::error_code ec) { committed.set_value(ec); });
    ASSERT_FALSE(committed.get_future().get());
  }

  auto polls = [&] { return api.state()["polls"].as_object()[std::to_string(bot)].as_object()["offsets"].as_array(); };
  const auto polled_before = polls().size();  // the fake keeps the last 50: far from full here
  api.add_update(bot_token, telegram_text(chat, "supergroup", 2, 555, "Bo", "after the upgrade"));
  server.start();
  dp = dp_client::connect(server.port(), server.key(), "telegram", {{"connector_id", connector_id}});
  ASSERT_TRUE(dp);
  ASSERT_TRUE(dp->open_channel(channel));
  auto m = dp->next_push("chat.message", channel, 15s);
  ASSERT_TRUE(m);
  EXPECT_EQ(text_of(payload_of(*m), "text"), "after the upgrade");
  dp->send("chat.message.ack", {{"message_id", payload_of(*m).at("message_id")}, {"status", "accepted"}}, channel);
  auto offsets = polls();
  ASSERT_GT(offsets.size(), polled_before);
  EXPECT_EQ(offsets[polled_before].to_number<long long>(), read_id + 1)
      << "the first poll after the upgrade confirms what was read before it: the kept offset was carried over";
  dp.reset();
  server.stop();
  auto db = open_kept(store_path);
  ASSERT_TRUE(db);
  EXPECT_EQ(consumer_keys(*db, channel), std::set<std::string>{key}) << "the same key again, the bare hash gone";
  auto kv = kv_keys(*db);
  EXPECT_TRUE(kv.contains("offset/" + key));
  EXPECT_FALSE(kv.contains("offset/" + legacy));
  db.reset();
  server.start();  // for the fixture's own stop
}

}  // namespace
}  // namespace xconn::test

// echo's shared consumer (a token sign-in) is keyed by the host's HMAC of the token (ABI 1.5 consumer_key), not by a
// key of its own key-value store, which sits in the same store and every backup: the stored key is "token-" + 64 hex
// digits, the same for a second channel with that token and after a restart, another for another token.
#include "core/base/crypto.hpp"
#include "core/channels/consumer_registry.hpp"
#include "support/data_plane.hpp"
#include "support/server_fixture.hpp"

#include <gtest/gtest.h>

#include <set>

namespace xconn::test {
namespace {

std::set<std::string> echo_keys(const std::filesystem::path& store_path, const std::string& channel) {
  std::set<std::string> keys;
  auto db = store::open({store_path.string(), 1ull << 26, {std::string(consumer_registry::database)}});
  if (!db) {
    ADD_FAILURE() << db.error();
    return keys;
  }
  const std::string prefix = "echo\n" + channel + "\n";
  (*db)->scan(consumer_registry::database, prefix, [&](std::string_view k, std::string_view) {
    keys.emplace(k.substr(prefix.size()));
    return true;
  });
  return keys;
}

TEST(echo_consumer_key, a_token_sign_in_holds_the_hosts_hmac_of_the_token_stable_across_a_restart) {
  server_fixture server;
  server.start();
  std::string a, b, other, connector_id;
  {
    auto dp = dp_client::connect(server.port(), server.key());
    ASSERT_TRUE(dp);
    connector_id = dp->connector_id();
    a = dp->open_authenticated("tok-planted-echo-1");
    b = dp->open_authenticated("tok-planted-echo-1");
    other = dp->open_authenticated("tok-planted-echo-2");
    ASSERT_FALSE(a.empty() || b.empty() || other.empty());
  }
  server.stop();
  const auto store_path = server.dir().path() / "store";
  auto key_a = echo_keys(store_path, a);
  ASSERT_EQ(key_a.size(), 1u);
  const auto key = *key_a.begin();
  ASSERT_EQ(key.size(), 6 + 64u) << key;
  EXPECT_TRUE(key.starts_with("token-")) << key;
  EXPECT_EQ(key.find_first_not_of("0123456789abcdef", 6), std::string::npos) << key;
  EXPECT_NE(key.substr(6), sha256_hex("consumer\ntok-planted-echo-1"));
  EXPECT_EQ(echo_keys(store_path, b), key_a) << "one token, one consumer";
  auto key_other = echo_keys(store_path, other);
  ASSERT_EQ(key_other.size(), 1u);
  EXPECT_NE(*key_other.begin(), key);

  server.start();  // a restart: a new sign-in with the same token finds the same consumer
  {
    auto dp = dp_client::connect(server.port(), server.key(), "echo", {{"connector_id", connector_id}});
    ASSERT_TRUE(dp);
    auto c = dp->open_authenticated("tok-planted-echo-1");
    ASSERT_FALSE(c.empty());
    server.stop();
    EXPECT_EQ(echo_keys(store_path, c), key_a);
  }
}

}  // namespace
}  // namespace xconn::test

// consumer_key_maker (plugin.h xconn_host_consumer_key): 64 hex digits of an HMAC under a per-plugin key derived from
// the sealing key. Checked against an HMAC computed here with OpenSSL from the key file's bytes (so the derivation is
// the documented one, not merely self-consistent), stable across loads of the key file, different per plugin and per
// sealing key, never the bare sha256 of the material, and "" for empty or oversized material.
#include "core/plugin_host/consumer_key.hpp"

#include "core/base/crypto.hpp"
#include "support/test_support.hpp"

#include <gtest/gtest.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

namespace xconn {
namespace {

std::string raw_hmac(std::string_view key, std::string_view data) {
  unsigned char out[32];
  unsigned int size = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
       data.size(), out, &size);
  return std::string(reinterpret_cast<const char*>(out), size);
}

std::string unhex(const std::string& hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return out;
}

const std::string material = "irc.example\n6667\nplain\nxbot\nplanted-password-6a";

TEST(ConsumerKey, IsTheDocumentedHmacStableAcrossLoadsAndNoBareHash) {
  test::temp_dir dir;
  auto file = (dir.path() / "sealing_key").string();
  auto seal = sealer::load(file);
  ASSERT_TRUE(seal) << seal.error();
  auto key = consumer_key_maker(*seal).key("irc", material);
  ASSERT_EQ(key.size(), consumer_key_maker::key_chars);
  EXPECT_EQ(key.find_first_not_of("0123456789abcdef"), std::string::npos) << key;

  const auto sealing_key = unhex(test::read_file(file).substr(0, 64));
  const auto k_plugin = raw_hmac(sealing_key, std::string("xconn consumer key\0irc", 22));
  EXPECT_EQ(key, hmac_sha256_hex(k_plugin, material));
  EXPECT_NE(key, sha256_hex(material));
  EXPECT_NE(key, hmac_sha256_hex(sealing_key, material)) << "the plugin's own key, not the sealing key itself";

  auto again = sealer::load(file);  // a restart reads the same file
  ASSERT_TRUE(again);
  EXPECT_EQ(consumer_key_maker(*again).key("irc", material), key);
}

TEST(ConsumerKey, DiffersPerPluginPerMaterialAndPerSealingKey) {
  test::temp_dir dir;
  auto seal = sealer::load((dir.path() / "a").string());
  auto other_seal = sealer::load((dir.path() / "b").string());
  ASSERT_TRUE(seal && other_seal);
  consumer_key_maker keys(*seal);
  auto irc = keys.key("irc", material);
  EXPECT_NE(keys.key("telegram", material), irc) << "two plugins never share a key";
  EXPECT_NE(keys.key("ir", "c" + material), irc);
  EXPECT_NE(keys.key("irc", material + "x"), irc);
  EXPECT_NE(consumer_key_maker(*other_seal).key("irc", material), irc);
  // A plugin id that tries to run into the label's end makes no other plugin's key.
  EXPECT_NE(keys.key(std::string("irc\0", 4), material), irc);
}

TEST(ConsumerKey, RefusesEmptyAndOversizedMaterialAndTakesAnyBytes) {
  test::temp_dir dir;
  auto seal = sealer::load((dir.path() / "k").string());
  ASSERT_TRUE(seal);
  consumer_key_maker keys(*seal);
  EXPECT_EQ(keys.key("irc", ""), "");
  EXPECT_EQ(keys.key("irc", std::string(consumer_key_maker::max_material_bytes + 1, 'a')), "");
  EXPECT_EQ(keys.key("irc", std::string(consumer_key_maker::max_material_bytes, 'a')).size(), 64u);
  EXPECT_EQ(keys.key("irc", std::string("\0\xff\n\r", 4)).size(), 64u);
}

}  // namespace
}  // namespace xconn

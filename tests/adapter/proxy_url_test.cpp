// Reading a target's base URL (endpoint.hpp) and a proxy URL (proxy_url.hpp).
#include <xconn/adapter/endpoint.hpp>
#include <xconn/adapter/proxy_url.hpp>

#include <gtest/gtest.h>

namespace ad = xconn::adapter;

namespace proxy_url_cases {

TEST(endpoint, reads_scheme_host_port_and_base_path) {
  auto https = ad::endpoint::parse("https://api.telegram.org");
  ASSERT_TRUE(https);
  EXPECT_TRUE(https->tls);
  EXPECT_EQ(https->host, "api.telegram.org");
  EXPECT_EQ(https->port, "443");
  EXPECT_EQ(https->base_path, "");
  EXPECT_EQ(https->authority, "api.telegram.org");
  auto local = ad::endpoint::parse("http://127.0.0.1:8081/tg/");
  ASSERT_TRUE(local);
  EXPECT_FALSE(local->tls);
  EXPECT_EQ(local->port, "8081");
  EXPECT_EQ(local->base_path, "/tg");
  EXPECT_EQ(local->authority, "127.0.0.1:8081");
  auto v6 = ad::endpoint::parse("http://[::1]:9000");
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->authority, "[::1]:9000");
  EXPECT_NE(local->pool_key(), v6->pool_key());
  for (auto bad : {"", "ftp://x", "http://", "https://:443", "http://host:port", "http://h/a b", "http://h/x?q",
                   "http://h/x#f", "http://user@h"})
    EXPECT_FALSE(ad::endpoint::parse(bad)) << bad;
}

TEST(proxy_url, reads_http_and_socks5_with_credentials) {
  auto http = ad::proxy_url::parse("http://127.0.0.1:3128");
  ASSERT_TRUE(http);
  EXPECT_EQ(http->type, ad::proxy_url::kind::http);
  EXPECT_EQ(http->port, "3128");
  EXPECT_EQ(http->user, "");
  auto socks = ad::proxy_url::parse("socks5://user:pa:ss@[::1]:1080");
  ASSERT_TRUE(socks);
  EXPECT_EQ(socks->type, ad::proxy_url::kind::socks5);
  EXPECT_EQ(socks->host, "::1");
  EXPECT_EQ(socks->user, "user");
  EXPECT_EQ(socks->password, "pa:ss");
  for (auto bad : {"https://user:planted@proxy:3128/x", "", "socks4://proxy:1080", "socks5://proxy", "socks5://[::1]",
                   "socks5://planted@proxy:1080", "http://:planted@proxy:3128", "http://proxy:3128/path"})
    EXPECT_FALSE(ad::proxy_url::parse(bad)) << bad;
  EXPECT_FALSE(ad::proxy_url::parse("socks5://u:" + std::string(256, 'p') + "@proxy:1080"));
}

}  // namespace proxy_url_cases

// The adapter layer's HTTP client against a real loopback server (tests/adapter/http_test_server.hpp), plain and
// TLS, and through Debian's tinyproxy (CONNECT) and microsocks (SOCKS5) started here.
#include "http_test_server.hpp"

#include "support/daemon_process.hpp"

#include <xconn/adapter/http_client.hpp>

#include <boost/json.hpp>

using namespace std::chrono_literals;
namespace ad = xconn::adapter;
using http_test::scripted_answer;
using xconn::test::daemon_process;
using xconn::test::free_loopback_port;
using xconn::test::temp_dir;
using xconn::test::wait_until;

namespace http_client_cases {

constexpr const char* planted_token = "PLANTED-TOKEN-123:abc";

ad::http_client::options options_with(std::string ca_file, std::optional<ad::proxy_url> proxy = std::nullopt) {
  ad::http_client::options o;
  o.ca_file = std::move(ca_file);
  o.proxy = std::move(proxy);
  return o;
}

struct client_rig {
  boost::asio::io_context io;
  std::string trust_error;  // before client, which writes it
  ad::http_client client;

  explicit client_rig(ad::http_client::options options = {}) : client(io, std::move(options), &trust_error) {}
  ~client_rig() { client.close_idle(); }

  ad::http_reply send(const std::string& url, ad::http_request req, std::chrono::milliseconds timeout = 5s) {
    auto to = ad::endpoint::parse(url);
    EXPECT_TRUE(to) << url;
    return http_test::run_on(io, client.send(*to, std::move(req), timeout));
  }
  ad::http_reply get(const std::string& url, std::chrono::milliseconds timeout = 5s) {
    return send(url, ad::http_request::get(std::string("/bot") + planted_token + "/getMe"), timeout);
  }
};

bool listening(unsigned short port) {
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket s(io);
  boost::system::error_code ec;
  s.connect({boost::asio::ip::make_address("127.0.0.1"), port}, ec);
  return !ec;
}

// No failure's error text or code quotes the URL, the token in it or a header's secret.
void expect_no_secret(const ad::http_reply& r) {
  EXPECT_EQ(r.transport_error.find("PLANTED"), std::string::npos) << r.transport_error;
  EXPECT_EQ(r.transport_error.find("127.0.0.1"), std::string::npos) << r.transport_error;
  auto outcome = ad::outcome_of(r, {});
  EXPECT_EQ(outcome.code.find("PLANTED"), std::string::npos) << outcome.code;
}

TEST(http_client, keeps_the_connection_alive_and_reuses_it) {
  http_test::server target;
  client_rig rig;
  for (int i = 0; i < 3; ++i) {
    auto r = rig.get(target.url());
    ASSERT_TRUE(r.reached()) << r.transport_error;
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, R"({"ok":true})");
  }
  EXPECT_EQ(target.connections(), 1);
  EXPECT_EQ(rig.client.idle_count(), 1u);
  auto seen = target.requests();
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].method, "GET");
  EXPECT_EQ(seen[0].target, std::string("/bot") + planted_token + "/getMe");
  EXPECT_EQ(seen[0].host, "127.0.0.1:" + std::to_string(target.port()));
}

TEST(http_client, a_kept_connection_the_server_closed_is_replaced_once) {
  http_test::server target;
  client_rig rig;
  ASSERT_TRUE(rig.get(target.url()).reached());
  int calls = 0;
  target.script([&](const http_test::seen_request&) {
    return ++calls == 1 ? scripted_answer::acting(scripted_answer::mode::close) : scripted_answer{};
  });
  auto r = rig.get(target.url());
  EXPECT_TRUE(r.reached()) << r.transport_error;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(target.connections(), 2);
}

TEST(http_client, a_silent_target_times_out_within_the_call_deadline) {
  http_test::server target;
  target.script([](const http_test::seen_request&) { return scripted_answer::acting(scripted_answer::mode::silent); });
  client_rig rig;
  auto started = std::chrono::steady_clock::now();
  auto r = rig.get(target.url(), 300ms);
  auto took = std::chrono::steady_clock::now() - started;
  EXPECT_EQ(r.transport_error, "timeout");
  EXPECT_GE(took, 250ms);
  EXPECT_LT(took, 3s);
  EXPECT_EQ(ad::outcome_of(r, {}).code, "target_unreachable");
  EXPECT_TRUE(ad::outcome_of(r, {}).retryable);
  expect_no_secret(r);
}

TEST(http_client, a_429_is_rate_limited_with_the_targets_wait) {
  http_test::server target;
  target.script([](const http_test::seen_request& seen) {
    auto a = scripted_answer::with(429, "slow down");
    if (seen.target.ends_with("/getMe")) a.headers = {{"Retry-After", "7"}};
    return a;
  });
  client_rig rig;
  auto r = rig.get(target.url());
  ASSERT_TRUE(r.reached());
  EXPECT_EQ(r.retry_after_s, 7);
  auto outcome = ad::outcome_of(r, {});
  EXPECT_EQ(outcome.what, ad::http_outcome::kind::rate_limited);
  EXPECT_EQ(outcome.code, "rate_limited");
  EXPECT_EQ(outcome.wait, 7s);
  EXPECT_TRUE(outcome.retryable);
  // Without a Retry-After the wait is the floor of 1 s.
  auto bare = rig.send(target.url(), ad::http_request::get("/other"));
  EXPECT_EQ(bare.retry_after_s, -1);
  EXPECT_EQ(ad::outcome_of(bare, {}).wait, 1s);
}

TEST(http_client, a_5xx_a_garbled_answer_and_no_answer_are_target_unreachable) {
  http_test::server target;
  scripted_answer next;
  target.script([&](const http_test::seen_request&) { return next; });
  client_rig rig;
  auto check = [&](const ad::http_reply& r, const std::string& what) {
    auto outcome = ad::outcome_of(r, {});
    EXPECT_EQ(outcome.what, ad::http_outcome::kind::unreachable) << what;
    EXPECT_EQ(outcome.code, "target_unreachable") << what;
    EXPECT_TRUE(outcome.retryable) << what;
    expect_no_secret(r);
  };
  next = scripted_answer::with(503, "down");
  auto r = rig.get(target.url());
  EXPECT_EQ(r.status, 503);
  check(r, "503");
  next = scripted_answer::acting(scripted_answer::mode::garbled);
  r = rig.get(target.url());
  EXPECT_EQ(r.transport_error, "exchange_failed");
  check(r, "garbled");
  next = scripted_answer::acting(scripted_answer::mode::close);
  rig.client.close_idle();
  r = rig.get(target.url());
  EXPECT_EQ(r.transport_error, "exchange_failed");
  check(r, "closed without an answer");
  r = rig.get("http://127.0.0.1:" + std::to_string(free_loopback_port()));
  EXPECT_EQ(r.transport_error, "connect_failed");
  check(r, "refused connection");
  // A 200 whose body the adapter cannot read counts as no answer too.
  next = {};
  r = rig.get(target.url());
  EXPECT_EQ(ad::outcome_of(r, {}, false).code, "target_unreachable");
}

TEST(http_client, declared_refusals_carry_the_adapters_code) {
  http_test::server target;
  int status = 401;
  target.script([&](const http_test::seen_request&) { return scripted_answer::with(status, "{}"); });
  client_rig rig;
  ad::outcome_rules rules{{{401, "connection_not_authenticated"}, {404, "chat_not_found"}}};
  auto r = rig.get(target.url());
  EXPECT_EQ(ad::outcome_of(r, rules).what, ad::http_outcome::kind::refused);
  EXPECT_EQ(ad::outcome_of(r, rules).code, "connection_not_authenticated");
  EXPECT_FALSE(ad::outcome_of(r, rules).retryable);
  status = 404;
  EXPECT_EQ(ad::outcome_of(rig.get(target.url()), rules).code, "chat_not_found");
  status = 400;
  EXPECT_EQ(ad::outcome_of(rig.get(target.url()), rules).code, "target_rejected");
}

TEST(http_client, tls_is_verified_against_the_ca_file_and_the_host_name) {
  http_test::server target(true);
  client_rig trusting(options_with(target.ca_file()));
  ASSERT_EQ(trusting.trust_error, "");
  auto r = trusting.get(target.url());
  ASSERT_TRUE(r.reached()) << r.transport_error;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(trusting.get(target.url()).status, 200);
  EXPECT_EQ(target.connections(), 1);  // kept over TLS too

  client_rig untrusting;
  r = untrusting.get(target.url());
  EXPECT_EQ(r.transport_error, "tls_failed");
  expect_no_secret(r);
  // The certificate names 127.0.0.1, not localhost.
  r = trusting.get("https://localhost:" + std::to_string(target.port()));
  EXPECT_TRUE(r.transport_error == "tls_failed" || r.transport_error == "connect_failed") << r.transport_error;

  client_rig unreadable(options_with("/nonexistent/ca.pem"));
  EXPECT_EQ(unreadable.trust_error, "config.ca_file: cannot be read as PEM certificates");
}

TEST(http_client, a_json_post_and_a_multipart_form_arrive_as_sent) {
  http_test::server target;
  client_rig rig;
  auto r = rig.send(target.url(), ad::http_request::json_post("/send", boost::json::object{{"chat_id", 5}, {"text", "hi"}}));
  ASSERT_TRUE(r.reached());
  ad::multipart_form form;
  form.field("chat_id", "-100");
  form.file("document", "re\"port.pdf", "application/pdf", std::string("%PDF\0binary", 11));
  auto upload = form.post("/upload");
  upload.headers = {{"X-Signature", "PLANTED-SIGNATURE"}};
  r = rig.send(target.url(), std::move(upload));
  ASSERT_TRUE(r.reached());
  auto seen = target.requests();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].content_type, "application/json");
  EXPECT_EQ(boost::json::parse(seen[0].body), (boost::json::object{{"chat_id", 5}, {"text", "hi"}}));
  ASSERT_TRUE(seen[1].content_type.starts_with("multipart/form-data; boundary=")) << seen[1].content_type;
  auto boundary = seen[1].content_type.substr(seen[1].content_type.find('=') + 1);
  const auto& body = seen[1].body;
  EXPECT_NE(body.find("--" + boundary + "\r\nContent-Disposition: form-data; name=\"chat_id\"\r\n\r\n-100\r\n"),
            std::string::npos);
  EXPECT_NE(body.find("name=\"document\"; filename=\"re_port.pdf\"\r\nContent-Type: application/pdf\r\n\r\n" +
                      std::string("%PDF\0binary", 11) + "\r\n"),
            std::string::npos);
  EXPECT_TRUE(body.ends_with("--" + boundary + "--\r\n"));
  bool signed_header = false;
  for (const auto& [name, value] : seen[1].headers) signed_header |= name == "X-Signature" && value == "PLANTED-SIGNATURE";
  EXPECT_TRUE(signed_header);
}

TEST(http_client, the_answers_headers_are_kept_and_found_in_any_case) {
  http_test::server target;
  target.script([](const http_test::seen_request&) {
    scripted_answer a;
    a.headers = {{"X-Encrypted-Param", "dl-7"}, {"X-Other", "b"}};
    return a;
  });
  client_rig rig;
  auto r = rig.send(target.url(), ad::http_request::json_post("/upload", boost::json::object{}));
  ASSERT_TRUE(r.reached());
  EXPECT_EQ(r.header("x-encrypted-param"), "dl-7");
  EXPECT_EQ(r.header("X-OTHER"), "b");
  EXPECT_EQ(r.header("x-absent"), "");
}

TEST(http_client, a_download_streams_into_the_sink_under_its_cap) {
  http_test::server target;
  std::string file(300 * 1024, 'x');
  for (std::size_t i = 0; i < file.size(); i += 7) file[i] = static_cast<char>('a' + i % 26);
  bool chunked = false;
  target.script([&](const http_test::seen_request&) { return scripted_answer::with(200, file, chunked); });
  client_rig rig;
  auto to = *ad::endpoint::parse(target.url());
  for (bool c : {false, true}) {
    chunked = c;
    std::string got;
    int pieces = 0;
    auto sink = [&](std::string_view chunk) { got += chunk, ++pieces; };
    auto r = http_test::run_on(rig.io, rig.client.download(to, ad::http_request::get("/file/x"), file.size(), sink, 5s));
    ASSERT_TRUE(r.reached()) << r.transport_error;
    EXPECT_EQ(got, file) << "chunked " << c;
    EXPECT_GT(pieces, 1) << "streamed in pieces";
    EXPECT_EQ(r.body, "");
    EXPECT_EQ(r.body_bytes, file.size());
    got.clear();
    r = http_test::run_on(rig.io, rig.client.download(to, ad::http_request::get("/file/x"), 100 * 1024, sink, 5s));
    EXPECT_EQ(r.transport_error, "too_large") << "chunked " << c;
    EXPECT_LE(got.size(), 100u * 1024);
  }
  // A refusal's body is kept for the adapter to read, not streamed.
  target.script([](const http_test::seen_request&) { return scripted_answer::with(404, "missing"); });
  std::string got;
  auto r = http_test::run_on(rig.io, rig.client.download(to, ad::http_request::get("/file/y"), 10,
                                                         [&](std::string_view c) { got += c; }, 5s));
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.body, "missing");
  EXPECT_EQ(got, "");
}

TEST(http_client, requests_tunnel_through_an_http_connect_proxy) {
  http_test::server target;
  temp_dir dir;
  auto proxy_port = free_loopback_port();
  xconn::test::write_file(dir.path() / "tinyproxy.conf",
                          "Port " + std::to_string(proxy_port) +
                              "\nListen 127.0.0.1\nTimeout 60\nMaxClients 20\nAllow 127.0.0.1\n"
                              "BasicAuth xconn planted-proxy-pass\nLogLevel Connect\nLogFile \"" +
                              (dir.path() / "tinyproxy.log").string() + "\"\n");
  daemon_process proxy({"-d", "-c", (dir.path() / "tinyproxy.conf").string()}, dir.path(), {}, "/usr/bin/tinyproxy");
  ASSERT_TRUE(wait_until([&] { return listening(proxy_port); }, 10s)) << proxy.console();
  auto via = [&](const std::string& password) {
    return ad::proxy_url::parse("http://xconn:" + password + "@127.0.0.1:" + std::to_string(proxy_port));
  };
  client_rig good(options_with("", via("planted-proxy-pass")));
  auto r = good.get(target.url());
  ASSERT_TRUE(r.reached()) << r.transport_error;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(good.get(target.url()).status, 200);
  EXPECT_EQ(target.connections(), 1);  // one tunnel, kept
  client_rig wrong(options_with("", via("wrong-pass")));
  r = wrong.get(target.url());
  EXPECT_EQ(r.transport_error, "proxy_refused");
  expect_no_secret(r);
  EXPECT_EQ(xconn::test::read_file(dir.path() / "tinyproxy.log").find("PLANTED"), std::string::npos)
      << "the proxy saw the token";
}

TEST(http_client, requests_tunnel_through_a_socks5_proxy_with_a_password) {
  http_test::server target(true);
  temp_dir dir;
  auto proxy_port = free_loopback_port();
  daemon_process proxy({"-i", "127.0.0.1", "-p", std::to_string(proxy_port), "-u", "xconn", "-P", "planted-socks-pass"},
                       dir.path(), {}, "/usr/bin/microsocks");
  ASSERT_TRUE(wait_until([&] { return listening(proxy_port); }, 10s)) << proxy.console();
  auto via = [&](const std::string& password) {
    return ad::proxy_url::parse("socks5://xconn:" + password + "@127.0.0.1:" + std::to_string(proxy_port));
  };
  client_rig good(options_with(target.ca_file(), via("planted-socks-pass")));
  auto r = good.get(target.url());
  ASSERT_TRUE(r.reached()) << r.transport_error;
  EXPECT_EQ(r.status, 200);  // TLS end to end through the tunnel
  client_rig wrong(options_with(target.ca_file(), via("wrong-pass")));
  r = wrong.get(target.url());
  EXPECT_EQ(r.transport_error, "proxy_refused");
  expect_no_secret(r);
  EXPECT_EQ(target.requests().size(), 1u);
}

// A request braced in the co_await expression itself, with short (in-place) strings and a header, as an adapter writes
// it when it calls the client directly: an aggregate request was relocated bitwise by GCC 12 and its strings freed
// as heap memory (free(): invalid pointer in run).
ad::http_request signed_copy(ad::http_request req) {
  req.headers.emplace_back("X-Sig", "v1");
  return req;
}

boost::asio::awaitable<ad::http_reply> post_braced_inline(ad::http_client& client, ad::endpoint to, std::string path,
                                                          std::string body) {
  const std::string json_type = "application/json";
  co_return co_await client.send(to, signed_copy({boost::beast::http::verb::post, path, json_type, body, {}}), 5s);
}

TEST(http_client, a_request_braced_in_the_awaited_call_arrives_as_sent) {
  http_test::server target;
  client_rig rig;
  for (int i = 0; i < 3; ++i) {
    auto r = http_test::run_on(rig.io, post_braced_inline(rig.client, *ad::endpoint::parse(target.url()), "/", "{}"));
    ASSERT_TRUE(r.reached()) << r.transport_error;
    EXPECT_EQ(r.status, 200);
  }
  auto seen = target.requests();
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[2].target, "/");
  EXPECT_EQ(seen[2].content_type, "application/json");
  EXPECT_EQ(seen[2].body, "{}");
}

// The call owns its endpoint and request: it may be awaited after the caller's temporaries (and variables) changed
// or died.
TEST(http_client, a_call_keeps_its_own_endpoint_and_request_until_it_runs) {
  http_test::server target;
  client_rig rig;
  auto to = *ad::endpoint::parse(target.url());
  auto call = rig.client.send(to, ad::http_request::json_post("/later", boost::json::object{{"a", 1}}), 5s);
  to.host = "no-such-host.invalid";  // had the call kept a reference, it would go there
  to.port = "1";
  auto r = http_test::run_on(rig.io, std::move(call));
  ASSERT_TRUE(r.reached()) << r.transport_error;
  EXPECT_EQ(r.status, 200);
  auto seen = target.requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].target, "/later");
  EXPECT_EQ(seen[0].body, R"({"a":1})");
}

}  // namespace http_client_cases

// The real xconnd and the transfer plane: an uploaded file survives a kill -9, the signature of a download URL
// never reaches the log, and a 100 MiB upload streams through without the daemon holding it (its memory and
// speed are printed beside this machine's ceilings) (docs/protocol.md "One server, many connectors", "Files").
#include "support/daemon_process.hpp"
#include "support/data_plane.hpp"
#include "support/files_helpers.hpp"
#include "support/sanitizers.hpp"
#include "support/server_fixture.hpp"
#include "support/upload_client.hpp"
#include "support/wire_client.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <string>

namespace xconn::test {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

const std::string daemon_key = "xck_files_daemon_key_0123456789abcdef";

std::string daemon_config(const std::string& files_section = "") {
  return test_daemon_config(plugin_dir(), files_section, 1073741824);
}

// Starts xconnd in dir (with the default config when dir has none yet); port 0 when it did not come up.
std::unique_ptr<daemon_process> start_daemon(const temp_dir& dir, unsigned short& port) {
  if (!std::filesystem::exists(dir.path() / "xconnd.yaml")) write_file(dir.path() / "xconnd.yaml", daemon_config());
  return start_test_daemon(dir.path(), daemon_key, port);
}

std::map<std::string, std::string> daemon_auth(const std::string& channel = "") {
  std::map<std::string, std::string> h{{"Authorization", "Bearer " + daemon_key}};
  if (!channel.empty()) h["X-XAgent-Connector-Channel-ID"] = channel;
  return h;
}

TEST(FilesDaemon, an_uploaded_file_survives_a_kill_9) {
  temp_dir dir;
  unsigned short port = 0;
  auto d = start_daemon(dir, port);
  ASSERT_NE(port, 0);
  std::string channel, connector_id;
  {
    auto c = dp_client::connect(port, daemon_key);
    ASSERT_TRUE(c);
    connector_id = c->connector_id();
    channel = c->open_authenticated();
    ASSERT_FALSE(channel.empty());
  }
  auto data = random_bytes(3 * 1024 * 1024);
  auto digest = sha256_of(data);
  auto h = daemon_auth(channel);
  h["Content-Type"] = multipart_type();
  auto r = http_call(port, "POST", uploads, h, multipart({file_part(data, "durable.bin")}));
  ASSERT_EQ(r.status, 201) << r.body;
  auto o = r.json().as_object();
  EXPECT_EQ(jstr(o, "sha256"), digest);
  auto ref = jstr(o, "file_ref");
  auto u = parse_url(jstr(o, "download_url"));

  d->signal(SIGKILL);
  ASSERT_EQ(d->wait_exit(), 128 + SIGKILL);
  d = start_daemon(dir, port);
  ASSERT_NE(port, 0);

  auto g = http_call(port, "GET", refs(ref), daemon_auth());
  ASSERT_EQ(g.status, 200) << g.body.substr(0, 200);
  EXPECT_EQ(g.body.size(), data.size());
  EXPECT_TRUE(g.body == data) << "the bytes differ after the kill -9";
  EXPECT_EQ(sha256_of(g.body), digest);
  EXPECT_EQ(g.headers["etag"], "\"" + digest + "\"");
  // The channel binding survived too, and so did the signing secret (the URL now names the new port's origin
  // only in its origin part; its path and query are what the server checks).
  EXPECT_EQ(http_call(port, "GET", refs(ref), daemon_auth(channel)).status, 200);
  auto s = http_call(port, "GET", u.target());
  EXPECT_EQ(s.status, 200);
  EXPECT_EQ(sha256_of(s.body), digest);
}

TEST(FilesDaemon, the_signature_of_a_download_url_never_reaches_the_log) {
  temp_dir dir;
  unsigned short port = 0;
  auto d = start_daemon(dir, port);
  ASSERT_NE(port, 0);
  std::string sig, inbound_sig;
  {
    auto c = dp_client::connect(port, daemon_key);
    ASSERT_TRUE(c);
    auto channel = c->open_authenticated();
    ASSERT_FALSE(channel.empty());
    auto h = daemon_auth(channel);
    h["Content-Type"] = multipart_type();
    auto r = http_call(port, "POST", uploads, h, multipart({file_part("planted", "plant.txt", "text/plain")}));
    ASSERT_EQ(r.status, 201) << r.body;
    auto u = parse_url(jstr(r.json().as_object(), "download_url"));
    ASSERT_TRUE(u.ok);
    sig = u.sig;
    EXPECT_EQ(http_call(port, "GET", u.target()).status, 200);
    auto bad = u;
    bad.sig = tamper(u.sig);
    EXPECT_EQ(http_call(port, "GET", bad.target()).status, 403);  // a refusal is a likely place to log the URL
    bad = u;
    bad.exp = std::to_string(std::stoll(u.exp) + 1);
    EXPECT_EQ(http_call(port, "GET", bad.target()).status, 403);
    EXPECT_EQ(http_call(port, "DELETE", u.target()).status, 401);
    // An inbound attachment's URL as well.
    auto inj = http_call(port, "POST", echo_base + "/inject", daemon_auth(),
                         json::serialize(json::object{{"connector_channel_id", channel},
                                                      {"text", "file"},
                                                      {"files", json::array{json::object{{"filename", "x.png"},
                                                                                         {"mime_type", "image/png"},
                                                                                         {"content_base64", base64(png_bytes(100))}}}}}));
    EXPECT_EQ(inj.status, 202) << inj.body;
    auto m = c->next_push("chat.message", channel);
    auto mp = m ? payload_of(*m) : json::object{};
    auto* files = mp.if_contains("files");
    if (files && files->is_array() && !files->as_array().empty() && files->as_array()[0].is_object()) {
      auto iu = parse_url(jstr(files->as_array()[0].as_object(), "download_url"));
      inbound_sig = iu.sig;
      EXPECT_EQ(http_call(port, "GET", iu.target()).status, 200);
    } else {
      ADD_FAILURE() << "no chat.message with files";
    }
  }
  d->signal(SIGTERM);
  EXPECT_EQ(d->wait_exit(), 0);
  auto console = d->console();
  ASSERT_FALSE(sig.empty());
  EXPECT_EQ(console.find(sig), std::string::npos) << console;
  EXPECT_EQ(console.find(sig.substr(0, 32)), std::string::npos) << "half of the signature is in the log";
  if (!inbound_sig.empty()) {
    EXPECT_EQ(console.find(inbound_sig), std::string::npos) << console;
  }
  EXPECT_EQ(console.find(daemon_key), std::string::npos);
}

// /proc/<pid>/status figures in kB (-1 when absent).
struct proc_memory {
  long rss_anon_kb = -1;
  long vm_hwm_kb = -1;
  long vm_rss_kb = -1;
};
proc_memory memory_of(pid_t pid) {
  proc_memory m;
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    auto value = [&] { return std::atol(line.substr(line.find(':') + 1).c_str()); };
    if (line.starts_with("RssAnon:")) m.rss_anon_kb = value();
    if (line.starts_with("VmHWM:")) m.vm_hwm_kb = value();
    if (line.starts_with("VmRSS:")) m.vm_rss_kb = value();
  }
  return m;
}

// Uploads and downloads a small file, so that the first-use allocations of both paths come before a measurement.
void warm_up(unsigned short port, const std::string& channel) {
  auto h = daemon_auth(channel);
  h["Content-Type"] = multipart_type();
  auto w = http_call(port, "POST", uploads, h, multipart({file_part(random_bytes(256 * 1024), "warm.bin")}));
  ASSERT_EQ(w.status, 201) << w.body;
  EXPECT_EQ(http_call(port, "GET", refs(jstr(w.json().as_object(), "file_ref")), daemon_auth()).status, 200);
}

// The ceiling on this machine: seconds to make size bytes from seed and write them to /dev/null.
double null_ceiling_s(std::uint64_t seed, std::uint64_t size) {
  byte_source null_src(seed);
  std::ofstream null_out("/dev/null", std::ios::binary);
  std::string piece(1024 * 1024, '\0');
  auto t2 = steady::now();
  for (std::uint64_t done = 0; done < size; done += piece.size()) {
    null_src.fill(piece.data(), piece.size());
    null_out.write(piece.data(), static_cast<std::streamsize>(piece.size()));
  }
  null_out.flush();
  return std::chrono::duration<double>(steady::now() - t2).count();
}

// The durable ceiling: the same bytes written to a file beside the store and flushed to disk once, as the
// upload's last commit does (the disk, not the server, bounds an upload that must survive a crash).
void disk_ceiling(const std::filesystem::path& disk_path, std::uint64_t seed, std::uint64_t size, double& seconds) {
  byte_source disk_src(seed);
  std::string piece(1024 * 1024, '\0');
  int fd = ::open(disk_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  auto t3 = steady::now();
  for (std::uint64_t done = 0; done < size; done += piece.size()) {
    disk_src.fill(piece.data(), piece.size());
    ASSERT_EQ(::write(fd, piece.data(), piece.size()), static_cast<ssize_t>(piece.size()));
  }
  ::fdatasync(fd);
  seconds = std::chrono::duration<double>(steady::now() - t3).count();
  ::close(fd);
  std::filesystem::remove(disk_path);
}

struct transfer_figures {
  proc_memory before, after_upload, after_download;
  double upload_s = 0, download_s = 0, null_s = 0, disk_s = 0;
};

void print_figures(const transfer_figures& f, std::uint64_t size) {
  auto mb = static_cast<double>(size) / 1e6;
  std::cout << std::fixed << std::setprecision(1) << "[files memory] daemon RssAnon before "
            << f.before.rss_anon_kb / 1024.0 << " MiB, after the 100 MiB upload " << f.after_upload.rss_anon_kb / 1024.0
            << " MiB, after its download " << f.after_download.rss_anon_kb / 1024.0 << " MiB; VmHWM before "
            << f.before.vm_hwm_kb / 1024.0 << " MiB, after upload " << f.after_upload.vm_hwm_kb / 1024.0
            << " MiB, after download " << f.after_download.vm_hwm_kb / 1024.0 << " MiB\n"
            << "[files speed] upload " << mb / f.upload_s << " MB/s (" << f.upload_s << " s), download "
            << mb / f.download_s << " MB/s (" << f.download_s << " s), /dev/null ceiling " << mb / f.null_s
            << " MB/s (" << f.null_s << " s), disk write + fdatasync ceiling " << mb / f.disk_s << " MB/s ("
            << f.disk_s << " s) for " << mb << " MB: upload at " << 100.0 * f.disk_s / f.upload_s
            << " % of the disk ceiling" << std::endl;
}

TEST(FilesDaemon, a_100_mib_upload_streams_through_without_the_daemon_holding_it) {
  if (under_address_sanitizer) GTEST_SKIP() << "memory figures mean nothing under ASan";
  constexpr std::uint64_t size = 100ull * 1024 * 1024;
  constexpr std::uint64_t seed = 0x5eed5eed1234ull;
  const auto limit = steady::now() + 120s;
  auto left = [&] { return std::max(1ms, std::chrono::duration_cast<std::chrono::milliseconds>(limit - steady::now())); };
  temp_dir dir;
  unsigned short port = 0;
  auto d = start_daemon(dir, port);
  ASSERT_NE(port, 0);
  auto c = dp_client::connect(port, daemon_key);
  ASSERT_TRUE(c);
  auto channel = c->open_authenticated();
  ASSERT_FALSE(channel.empty());
  ASSERT_NO_FATAL_FAILURE(warm_up(port, channel));
  transfer_figures f;
  f.before = memory_of(d->pid());
  ASSERT_GT(f.before.rss_anon_kb, 0) << "no RssAnon in /proc/" << d->pid() << "/status";

  byte_source up_src(seed);
  sha256 up_hash;
  auto t0 = steady::now();
  auto s = stream_upload(port, daemon_auth(channel), "big.bin", size, false,
                         [&](char* p, std::size_t n) {
                           up_src.fill(p, n);
                           up_hash.update(std::string_view(p, n));
                         },
                         left());
  f.upload_s = std::chrono::duration<double>(steady::now() - t0).count();
  f.after_upload = memory_of(d->pid());
  ASSERT_TRUE(s.response) << "no answer to the 100 MiB upload (sent " << s.file_bytes_sent << " bytes)";
  ASSERT_EQ(s.response->status, 201) << s.response->body;
  auto digest = up_hash.hex();
  auto o = s.response->json().as_object();
  EXPECT_EQ(jint(o, "byte_size"), static_cast<std::int64_t>(size));
  EXPECT_EQ(jstr(o, "sha256"), digest);

  // Download, hashed as it arrives.
  sha256 down_hash;
  auto dl = raw_http::connect(port);
  ASSERT_TRUE(dl);
  auto h = daemon_auth();
  h["Connection"] = "close";
  auto t1 = steady::now();
  ASSERT_TRUE(dl->send(request_head("GET", refs(jstr(o, "file_ref")), h)));
  auto g = dl->read_response(left(), false, [&](std::string_view bytes) { down_hash.update(bytes); });
  f.download_s = std::chrono::duration<double>(steady::now() - t1).count();
  f.after_download = memory_of(d->pid());
  ASSERT_TRUE(g) << "the download did not complete in time";
  EXPECT_EQ(g->status, 200);
  EXPECT_EQ(g->body_bytes, size);
  EXPECT_EQ(down_hash.hex(), digest);

  f.null_s = null_ceiling_s(seed, size);
  ASSERT_NO_FATAL_FAILURE(disk_ceiling(dir.path() / "ceiling.bin", seed, size, f.disk_s));
  print_figures(f, size);
  EXPECT_LT(f.after_upload.rss_anon_kb - f.before.rss_anon_kb, 100 * 1024) << "RssAnon grew by the file's size or more";
  EXPECT_LT(f.after_download.rss_anon_kb - f.before.rss_anon_kb, 100 * 1024)
      << "RssAnon grew by the file's size or more";
  EXPECT_LT(steady::now(), limit);
}

}  // namespace
}  // namespace xconn::test

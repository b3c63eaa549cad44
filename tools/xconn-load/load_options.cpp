#include "load_options.hpp"

#include <boost/asio/ip/address.hpp>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <thread>

namespace xconn::load {
namespace {

template <typename T>
std::optional<T> number_in(const std::string& text, T low, T high) {
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < low || value > high) return std::nullopt;
  return value;
}

std::optional<scenario> scenario_named(const std::string& name) {
  for (auto s : {scenario::invoke, scenario::inbound, scenario::outbound, scenario::mixed, scenario::idle,
                 scenario::upload, scenario::download})
    if (to_string(s) == name) return s;
  return std::nullopt;
}

// HOST:PORT or [V6]:PORT, loopback only: the tool never sends load anywhere else.
std::optional<std::string> read_address(const std::string& text, load_options& o) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos) return "expected HOST:PORT";
  std::string host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  boost::system::error_code ec;
  auto address = boost::asio::ip::make_address(host, ec);
  if (ec) return "the host must be an IP address";
  if (!address.is_loopback()) return "only loopback addresses (127.0.0.0/8, ::1) are allowed";
  auto port = number_in<unsigned short>(text.substr(colon + 1), 1, 65535);
  if (!port) return "the port must be 1..65535";
  o.host = host;
  o.port = *port;
  return std::nullopt;
}

std::string first_line_of(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

std::string_view to_string(scenario s) {
  switch (s) {
    case scenario::invoke: return "invoke";
    case scenario::inbound: return "inbound";
    case scenario::outbound: return "outbound";
    case scenario::mixed: return "mixed";
    case scenario::idle: return "idle";
    case scenario::upload: return "upload";
    case scenario::download: return "download";
  }
  return "?";
}

std::string usage() {
  return R"(usage: xconn-load [options]
Drives xconnd (or the ws_ceiling server) over its WebSocket data plane, or its file transfers over HTTP, and
reports throughput and latency.

  --server HOST:PORT    xconnd to load (default 127.0.0.1:8840; loopback only)
  --ceiling HOST:PORT   load bench/ws_ceiling instead, with the same frames (no hello, no channels): invoke,
                        or download (GET /bytes/N from its memory)
  --plugin ID           connector to use (default echo)
  --key KEY             API key (default $XCONN_API_KEY, else the file named by --key-file)
  --key-file PATH       file holding the API key (default ./var/xconn/api_key)
  --scenario NAME       invoke | inbound | outbound | mixed | idle | upload | download (default invoke);
                        upload and download: one HTTP connection beside each socket, one request at a time,
                        each naming the socket's first channel
  --sockets N           WebSocket connections, each after its hello (1..20000, default 1)
  --channels M          channels in all, signed in with echo_token, spread over the sockets (default N)
  --inflight K          operations in flight per channel (1..1024, default 1)
  --threads T           client I/O threads (1..64; default: half the cores, at most one per socket, since the
                        server runs on the same machine)
  --duration S          timed phase, seconds (0.1..3600, default 10)
  --count C             stop after C operations (default: only the duration bounds the run)
  --rate R              send R operations per second in all, paced, whatever is still unanswered
                        (invoke, outbound, mixed; default: each slot sends when its last one is answered)
  --burst B             inbound: messages per echo_burst call (1..10000, default 100)
  --deltas D            outbound: deltas before each final (0..100, default 2)
  --text-bytes L        text length of generated messages (1..65536, default 64)
  --file-bytes F        upload, download: bytes in each file (1..1073741824, default 1048576)
  --server-pid PID      idle: report the server's resident memory per socket and per channel opened
  --ready-file PATH     create PATH once every socket and channel is set up (to start another run beside this one)
  --json                print the report as one JSON object on stdout
  --no-progress         no progress line on stderr
)";
}

namespace {

// A numeric option into o: "" once read, unknown_option for a name that is none of them, else why the value
// is refused.
constexpr std::string_view unknown_option = "unknown option";
std::string read_number(const std::string& name, const std::string& value, load_options& o) {
  struct int_option { const char* name; int* slot; int low, high; };
  const int_option ints[] = {{"--sockets", &o.sockets, 1, 20000},   {"--channels", &o.channels, 1, 1000000},
                             {"--inflight", &o.inflight, 1, 1024}, {"--threads", &o.threads, 1, 64},
                             {"--burst", &o.burst, 1, 10000},      {"--deltas", &o.deltas, 0, 100},
                             {"--text-bytes", &o.text_bytes, 1, 65536},
                             {"--server-pid", &o.server_pid, 1, 1 << 30}};
  for (const auto& io : ints) {
    if (name != io.name) continue;
    auto n = number_in<int>(value, io.low, io.high);
    if (!n) return "expected an integer " + std::to_string(io.low) + ".." + std::to_string(io.high);
    *io.slot = *n;
    return {};
  }
  if (name == "--duration") {
    auto seconds = number_in<double>(value, 0.1, 3600);
    if (!seconds) return "expected seconds, 0.1..3600";
    o.duration_s = *seconds;
  } else if (name == "--rate") {
    auto r = number_in<double>(value, 1, 10'000'000);
    if (!r) return "expected operations per second, 1..10000000";
    o.rate = *r;
  } else if (name == "--file-bytes") {
    auto n = number_in<std::uint64_t>(value, 1, 1ull << 30);
    if (!n) return "expected bytes, 1..1073741824";
    o.file_bytes = *n;
  } else if (name == "--count") {
    auto n = number_in<std::uint64_t>(value, 1, 1'000'000'000'000ull);
    if (!n) return "expected a positive integer";
    o.count = *n;
  } else {
    return std::string(unknown_option);
  }
  return {};
}

}  // namespace

parse_outcome parse_options(const std::vector<std::string>& args) {
  load_options o;
  std::string key_file = "./var/xconn/api_key";
  bool key_given = false;
  auto fail = [](std::string message) { return parse_outcome{std::nullopt, std::move(message), false}; };
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& name = args[i];
    if (name == "--help" || name == "-h") return {std::nullopt, usage(), true};
    if (name == "--json") { o.json = true; continue; }
    if (name == "--no-progress") { o.progress = false; continue; }
    if (i + 1 >= args.size()) return fail(name + ": unknown option or missing value");
    const std::string& value = args[++i];
    auto bad = [&](const std::string& why) { return fail(name + " " + value + ": " + why); };
    if (name == "--server" || name == "--ceiling") {
      if (auto why = read_address(value, o)) return bad(*why);
      o.target = name == "--server" ? target_kind::xconnd : target_kind::ceiling;
    } else if (name == "--plugin") {
      if (value.empty() || value.size() > 64) return bad("expected a plugin id");
      o.plugin = value;
    } else if (name == "--key") {
      o.key = value;
      key_given = true;
    } else if (name == "--key-file") {
      key_file = value;
    } else if (name == "--ready-file") {
      if (value.empty()) return bad("expected a path");
      o.ready_file = value;
    } else if (name == "--scenario") {
      auto s = scenario_named(value);
      if (!s) return bad("expected invoke, inbound, outbound, mixed, idle, upload or download");
      o.what = *s;
    } else if (auto why = read_number(name, value, o); !why.empty()) {
      return why == unknown_option ? fail(name + ": unknown option") : bad(why);
    }
  }
  if (o.channels == 0) o.channels = o.sockets;
  if (o.threads == 0)
    o.threads = std::clamp(static_cast<int>(std::thread::hardware_concurrency() / 2), 1, std::min(64, o.sockets));
  if (o.channels < o.sockets) return fail("--channels must be at least --sockets (every socket carries a channel)");
  if (o.target == target_kind::ceiling && o.what != scenario::invoke && o.what != scenario::download)
    return fail("--ceiling answers invoke frames and downloads only (--scenario invoke or download)");
  if (o.rate > 0 && o.what != scenario::invoke && o.what != scenario::outbound && o.what != scenario::mixed)
    return fail("--rate paces invoke, outbound and mixed operations only");
  if (!key_given && o.target == target_kind::xconnd) {
    if (const char* env = std::getenv("XCONN_API_KEY"); env && *env) o.key = env;
    else o.key = first_line_of(key_file);
    if (o.key.empty()) return fail("no API key: pass --key, set XCONN_API_KEY or point --key-file at one");
  }
  return {o, "", false};
}

}  // namespace xconn::load

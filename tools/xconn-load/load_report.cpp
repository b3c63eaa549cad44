#include "load_report.hpp"

#include <boost/json.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace xconn::load {
namespace json = boost::json;

namespace {

std::string format(const char* fmt, auto... args) {
  char line[256];
  std::snprintf(line, sizeof line, fmt, args...);
  return line;
}

}  // namespace

long long resident_bytes(int pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::atoll(line.c_str() + 6) * 1024;
  return 0;
}

std::string progress_line(double seconds, std::uint64_t completed, double rate, std::uint64_t errors,
                          std::int64_t in_flight) {
  return format("%7.1f s  %12llu ops  %10.0f/s  errors %llu  in flight %lld", seconds,
                static_cast<unsigned long long>(completed), rate, static_cast<unsigned long long>(errors),
                static_cast<long long>(in_flight));
}

std::string to_text(const run_report& r) {
  const auto& o = *r.opts;
  const auto& t = r.totals;
  std::ostringstream out;
  out << "xconn-load " << to_string(o.what) << " against "
      << (o.target == target_kind::ceiling ? "ws_ceiling " : "xconnd ") << o.host << ":" << o.port << ": "
      << o.sockets << " sockets, " << o.channels << " channels, " << o.inflight << " in flight each, "
      << o.threads << " client threads";
  if (o.rate > 0) out << format(", paced at %.0f/s", o.rate);
  out << "\n";
  out << format("  set-up       %.2f s (%d sockets with their hellos, %d channels signed in)\n", r.setup_s, o.sockets,
                o.channels);
  out << format("  elapsed      %.2f s\n", r.elapsed_s);
  out << format("  operations   %llu (%.0f/s)\n", static_cast<unsigned long long>(t.operations), r.rate());
  if (moves_files(o.what))
    out << format("  files        %llu bytes each: %.1f MB/s\n", static_cast<unsigned long long>(o.file_bytes),
                  r.bytes_per_s() / 1e6);
  out << format("  latency ms   p50 %.3f  p90 %.3f  p99 %.3f  max %.3f  (%llu samples)\n", r.latency.p50_ms,
                r.latency.p90_ms, r.latency.p99_ms, r.latency.max_ms,
                static_cast<unsigned long long>(r.latency.samples));
  out << format("  errors       %llu  unanswered %llu  duplicates %llu  inbound acked %llu\n",
                static_cast<unsigned long long>(t.errors), static_cast<unsigned long long>(t.unanswered),
                static_cast<unsigned long long>(t.duplicates), static_cast<unsigned long long>(t.inbound_acked));
  for (const auto& [code, n] : t.error_codes) out << "    " << code << ": " << n << "\n";
  out << format("  frames       sent %llu  received %llu\n", static_cast<unsigned long long>(t.frames_sent),
                static_cast<unsigned long long>(t.frames_received));
  out << format("  client CPU   busiest thread %.0f %% of the window%s\n", 100 * r.client_busiest_share,
                r.client_bound() ? ": the client was the bottleneck (add --threads)" : "");
  if (r.memory)
    out << format("  server RSS   %.1f MiB before, %.1f MiB with the channels: %lld bytes per channel, %lld per socket\n",
                  r.memory->rss_before_bytes / 1048576.0, r.memory->rss_after_bytes / 1048576.0,
                  r.memory->per_channel_bytes(), r.memory->per_socket_bytes());
  return out.str();
}

std::string to_json(const run_report& r) {
  const auto& o = *r.opts;
  const auto& t = r.totals;
  json::object codes;
  for (const auto& [code, n] : t.error_codes) codes[code] = n;
  json::object report{
      {"scenario", to_string(o.what)},
      {"target", o.target == target_kind::ceiling ? "ceiling" : "xconnd"},
      {"sockets", o.sockets},
      {"channels", o.channels},
      {"inflight", o.inflight},
      {"rate", o.rate},
      {"threads", o.threads},
      {"setup_s", r.setup_s},
      {"elapsed_s", r.elapsed_s},
      {"operations", t.operations},
      {"ops_per_s", r.rate()},
      {"file_bytes", moves_files(o.what) ? o.file_bytes : 0},
      {"bytes_per_s", r.bytes_per_s()},
      {"latency_ms",
       {{"p50", r.latency.p50_ms}, {"p90", r.latency.p90_ms}, {"p99", r.latency.p99_ms}, {"max", r.latency.max_ms},
        {"samples", r.latency.samples}}},
      {"errors", t.errors},
      {"error_codes", std::move(codes)},
      {"unanswered", t.unanswered},
      {"duplicates", t.duplicates},
      {"inbound_acked", t.inbound_acked},
      {"frames_sent", t.frames_sent},
      {"frames_received", t.frames_received},
      {"client_cpu", {{"busiest_thread_share", r.client_busiest_share}, {"bottleneck", r.client_bound()}}},
  };
  if (r.memory)
    report["memory"] = {{"rss_before_bytes", r.memory->rss_before_bytes},
                        {"rss_after_bytes", r.memory->rss_after_bytes},
                        {"per_channel_bytes", r.memory->per_channel_bytes()},
                        {"per_socket_bytes", r.memory->per_socket_bytes()}};
  return json::serialize(report);
}

}  // namespace xconn::load

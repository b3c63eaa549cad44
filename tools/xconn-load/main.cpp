// xconn-load: opens N sockets and M signed-in channels on xconnd (or N sockets on ws_ceiling), runs one
// scenario for a bounded time or count, and reports throughput, latency and errors.
#include "load_driver.hpp"
#include "load_options.hpp"
#include "load_report.hpp"
#include "load_transfer.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include <pthread.h>
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <mutex>
#include <thread>

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using namespace xconn::load;
using steady = std::chrono::steady_clock;

// The connector_card_id a hello must name, from the plugin's public card.
std::string fetch_card_id(const asio::ip::tcp::endpoint& endpoint, const std::string& plugin, std::string& error) {
  asio::io_context io;
  beast::tcp_stream stream(io);
  stream.expires_after(std::chrono::seconds(10));
  beast::error_code ec;
  stream.socket().connect(endpoint, ec);
  http::request<http::empty_body> request{http::verb::get, "/connectors/" + plugin + "/connector-card.json", 11};
  request.set(http::field::host, endpoint.address().to_string());
  if (!ec) http::write(stream, request, ec);
  beast::flat_buffer buffer;
  http::response<http::string_body> response;
  if (!ec) http::read(stream, buffer, response, ec);
  if (ec) {
    error = "cannot fetch the connector card: " + ec.message();
    return "";
  }
  if (response.result() != http::status::ok) {
    error = "GET /connectors/" + plugin + "/connector-card.json answered " + std::to_string(response.result_int());
    return "";
  }
  auto card = boost::json::parse(response.body(), ec);
  auto* id = card.is_object() ? card.as_object().if_contains("connector_card_id") : nullptr;
  if (ec || !id || !id->is_string()) {
    error = "the connector card has no connector_card_id";
    return "";
  }
  return std::string(id->as_string());
}

// One io_context per client thread; each socket lives on one of them.
class client_threads {
 public:
  explicit client_threads(int n) : contexts_(static_cast<std::size_t>(n)) {
    for (auto& io : contexts_) guards_.emplace_back(io.get_executor());
    for (auto& io : contexts_) threads_.emplace_back([&io] { io.run(); });
  }
  ~client_threads() { join(std::chrono::seconds(0)); }
  asio::io_context& at(std::size_t i) { return contexts_[i % contexts_.size()]; }
  // CPU seconds each thread has used so far (its own clock: the time it ran, not the time it waited).
  std::vector<double> cpu_seconds() {
    std::vector<double> out;
    for (auto& t : threads_) {
      clockid_t clock;
      timespec ts{};
      bool read = pthread_getcpuclockid(t.native_handle(), &clock) == 0 && clock_gettime(clock, &ts) == 0;
      out.push_back(read ? static_cast<double>(ts.tv_sec) + ts.tv_nsec / 1e9 : 0.0);
    }
    return out;
  }
  // Lets the threads end once their sockets closed; past the grace period, stops them.
  void join(std::chrono::milliseconds grace) {
    guards_.clear();
    auto until = steady::now() + grace;
    while (steady::now() < until && !all_stopped()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    for (auto& io : contexts_) io.stop();
    for (auto& t : threads_)
      if (t.joinable()) t.join();
  }

 private:
  bool all_stopped() const {
    for (const auto& io : contexts_)
      if (!io.stopped()) return false;
    return true;
  }
  std::vector<asio::io_context> contexts_;
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> guards_;
  std::vector<std::thread> threads_;
};

// Every driver's set-up (a load_driver's or a transfer_client's); the first failure, or "".
template <typename Driver, typename... Args>
std::string set_up_all(std::vector<std::shared_ptr<Driver>>& drivers, client_threads& threads, const Args&... args) {
  std::mutex m;
  std::condition_variable cv;
  std::size_t done = 0;
  std::string failure;
  for (std::size_t i = 0; i < drivers.size(); ++i)
    asio::post(threads.at(i), [&, d = drivers[i]] {
      d->set_up(args..., [&](std::string why) {
        std::lock_guard lock(m);
        if (!why.empty() && failure.empty()) failure = why;
        ++done;
        cv.notify_one();
      });
    });
  std::unique_lock lock(m);
  // Bounded: 10,000 channels sign in well within this on a small machine.
  if (!cv.wait_for(lock, std::chrono::minutes(5), [&] { return done == drivers.size(); }))
    return "the set-up did not finish within 5 minutes";
  return failure;
}

// Waits out the measured window (or the operation count), printing progress each second when asked.
void measure_window(const load_options& o, const run_state& run, run_report& report) {
  const auto t0 = steady::now();
  const auto window = std::chrono::duration<double>(o.duration_s);
  auto next_progress = t0 + std::chrono::seconds(1);
  std::uint64_t last_completed = 0;
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const auto now = steady::now();
    const std::uint64_t completed = run.completed.load(), errors = run.errors.load();
    const bool counted_out = o.count && completed + errors >= o.count;
    if (now - t0 >= window || counted_out) {
      report.elapsed_s = std::chrono::duration<double>(now - t0).count();
      report.operations_in_window = completed;
      return;
    }
    if (o.progress && now >= next_progress && o.what != scenario::idle) {
      std::cerr << progress_line(std::chrono::duration<double>(now - t0).count(), completed,
                                 static_cast<double>(completed - last_completed), errors, run.in_flight.load())
                << "\n";
      last_completed = completed;
      next_progress += std::chrono::seconds(1);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  auto parsed = parse_options(std::vector<std::string>(argv + 1, argv + argc));
  if (!parsed.options) {
    if (parsed.help) {
      std::cout << parsed.message;
      return 0;
    }
    std::cerr << "xconn-load: " << parsed.message << " (--help lists the options)\n";
    return 2;
  }
  const load_options& o = *parsed.options;
  // One descriptor per socket and a few more: raise the soft limit as far as the hard one allows, or say why not.
  rlimit files{};
  const rlim_t files_needed = static_cast<rlim_t>(o.sockets) + 64;
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files_needed) {
    files.rlim_cur = std::min(files_needed, files.rlim_max);
    setrlimit(RLIMIT_NOFILE, &files);
    if (files.rlim_cur < files_needed) {
      std::cerr << "xconn-load: " << o.sockets << " sockets need " << files_needed
                << " open files, the hard limit is " << files.rlim_max << " (raise it: ulimit -Hn)\n";
      return 2;
    }
  }
  run_state run(o);
  const asio::ip::tcp::endpoint endpoint(asio::ip::make_address(o.host), o.port);
  if (o.target == target_kind::xconnd) {
    std::string error;
    run.card_id = fetch_card_id(endpoint, o.plugin, error);
    if (run.card_id.empty()) {
      std::cerr << "xconn-load: " << error << "\n";
      return 1;
    }
  }
  const upgrade_request request{endpoint, o.target == target_kind::xconnd ? "/connectors/" + o.plugin + "/ws" : "/",
                                o.key, o.target == target_kind::xconnd ? "xagent.connector.packet.v1" : ""};

  client_threads threads(o.threads);
  std::vector<std::shared_ptr<load_driver>> drivers;
  // The ceiling's downloads need no WebSocket: it has no channels to sign in.
  const int websockets = moves_files(o.what) && o.target == target_kind::ceiling ? 0 : o.sockets;
  for (int i = 0; i < websockets; ++i) {
    // Channels spread evenly: socket i carries channels i, i + N, i + 2N, ...
    int channels = o.channels / o.sockets + (i < o.channels % o.sockets ? 1 : 0);
    drivers.push_back(std::make_shared<load_driver>(threads.at(static_cast<std::size_t>(i)), run, i, channels));
  }

  run_report report;
  report.opts = &o;
  memory_reading memory;
  if (o.server_pid) memory.rss_before_bytes = resident_bytes(o.server_pid);
  const auto setup_start = steady::now();
  std::vector<std::shared_ptr<transfer_client>> transfers;
  auto failure = set_up_all(drivers, threads, request);
  if (failure.empty() && moves_files(o.what)) {
    for (int i = 0; i < o.sockets; ++i)
      transfers.push_back(std::make_shared<transfer_client>(
          threads.at(static_cast<std::size_t>(i)), run, endpoint,
          drivers.empty() ? std::string() : drivers[static_cast<std::size_t>(i)]->first_channel_id()));
    failure = set_up_all(transfers, threads);
  }
  auto finish_all = [&] {
    for (std::size_t i = 0; i < drivers.size(); ++i) asio::post(threads.at(i), [d = drivers[i]] { d->finish(); });
    for (std::size_t i = 0; i < transfers.size(); ++i) asio::post(threads.at(i), [t = transfers[i]] { t->finish(); });
  };
  if (!failure.empty()) {
    std::cerr << "xconn-load: set-up failed: " << failure << "\n";
    run.stopping = true;
    finish_all();
    threads.join(std::chrono::seconds(2));
    return 1;
  }
  report.setup_s = std::chrono::duration<double>(steady::now() - setup_start).count();
  if (!o.ready_file.empty()) std::ofstream(o.ready_file) << report.setup_s << "\n";

  auto cpu_before = threads.cpu_seconds();
  for (std::size_t i = 0; i < drivers.size(); ++i) asio::post(threads.at(i), [d = drivers[i]] { d->start(); });
  for (std::size_t i = 0; i < transfers.size(); ++i) asio::post(threads.at(i), [t = transfers[i]] { t->start(); });
  measure_window(o, run, report);
  auto cpu_after = threads.cpu_seconds();
  for (std::size_t i = 0; i < cpu_after.size() && report.elapsed_s > 0; ++i)
    report.client_busiest_share = std::max(report.client_busiest_share, (cpu_after[i] - cpu_before[i]) / report.elapsed_s);
  if (o.server_pid) {
    memory.rss_after_bytes = resident_bytes(o.server_pid);
    memory.channels = o.channels;
    memory.sockets = o.sockets;
    report.memory = memory;
  }

  // Drain: no new operations; what is in flight gets a few seconds to be answered.
  run.stopping = true;
  const auto drain_until = steady::now() + std::chrono::seconds(5);
  while (run.in_flight.load() > 0 && steady::now() < drain_until) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  finish_all();
  threads.join(std::chrono::seconds(5));

  for (auto& d : drivers) report.totals.merge(d->take_totals());
  for (auto& t : transfers) report.totals.merge(t->take_totals());
  report.latency = report.totals.latency.summarize();
  if (o.json)
    std::cout << to_json(report) << "\n";
  else
    std::cout << to_text(report);
  return report.totals.errors || report.totals.unanswered || report.totals.duplicates ? 1 : 0;
}

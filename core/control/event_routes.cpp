#include "core/control/event_routes.hpp"

#include "core/events/event_log.hpp"

#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <memory>

namespace xconn {
namespace http = boost::beast::http;

namespace {

constexpr std::uint64_t default_limit = 100;
constexpr std::uint64_t max_wait_s = 30;

struct events_query {
  std::uint64_t after = 0;
  std::uint64_t limit = default_limit;
  std::uint64_t wait_s = 0;
};

// The parameter's value within [low, high], its default when absent; nullopt when malformed or out of range.
std::optional<std::uint64_t> bounded(std::string_view target, std::string_view name, std::uint64_t fallback,
                                     std::uint64_t low, std::uint64_t high) {
  auto text = query_param(target, name);
  auto named = [&](char before) { return target.find(before + std::string(name) + "=") != std::string_view::npos; };
  if (text.empty()) return named('?') || named('&') ? std::nullopt : std::optional(fallback);
  auto v = parse_u64(text);
  if (!v || *v < low || *v > high) return std::nullopt;
  return v;
}

http_response page_response(server_context& ctx, const http_request_header& req, std::string_view plugin_id,
                            const events_query& q) {
  auto page = ctx.events.read(plugin_id, q.after, q.limit);
  return json_response(req, http::status::ok,
                       "{\"events\":" + page.events_json + ",\"next_after\":" + std::to_string(page.next_after) + "}");
}

// One long poll: answered by whichever comes first, an event or the timer.
struct long_poll : std::enable_shared_from_this<long_poll> {
  long_poll(server_context& c, http_request_header r, std::string id, events_query query,
            std::function<void(http_response)> a)
      : ctx(c), req(std::move(r)), plugin_id(std::move(id)), q(query), answer(std::move(a)), timer(c.io) {}

  void start() {
    timer.expires_after(std::chrono::seconds(q.wait_s));
    timer.async_wait([self = shared_from_this()](boost::system::error_code) { self->finish(); });
    ticket = ctx.events.wait_past(plugin_id, q.after, [weak = weak_from_this()] {
      if (auto self = weak.lock()) self->timer.cancel();  // the timer's handler answers, on an I/O thread
    });
  }
  void finish() {
    if (answered.exchange(true)) return;
    ctx.events.cancel(ticket);
    answer(page_response(ctx, req, plugin_id, q));
  }

  server_context& ctx;
  http_request_header req;
  std::string plugin_id;
  events_query q;
  std::function<void(http_response)> answer;
  boost::asio::steady_timer timer;
  std::uint64_t ticket = 0;
  std::atomic<bool> answered{false};
};

}  // namespace

void serve_events(server_context& ctx, const http_request& req, const connector_path& at,
                  std::function<void(http_response)> answer) {
  auto bad = [&](std::string_view name, std::string_view rule) {
    answer(error_response(req, http::status::bad_request, "invalid_request",
                          std::string(name) + " must be " + std::string(rule)));
  };
  events_query q;
  auto target = req.target();
  auto after = bounded(target, "after", 0, 0, UINT64_MAX);
  if (!after) return bad("after", "a decimal seq");
  auto limit = bounded(target, "limit", default_limit, 1, event_log::kept_per_plugin);
  if (!limit) return bad("limit", "1 to 1000");
  auto wait = bounded(target, "wait", 0, 0, max_wait_s);
  if (!wait) return bad("wait", "0 to 30 seconds");
  q = {*after, *limit, *wait};
  if (q.wait_s == 0) return answer(page_response(ctx, req, at.plugin_id, q));
  std::make_shared<long_poll>(ctx, req.base(), std::string(at.plugin_id), q, std::move(answer))->start();
}

}  // namespace xconn

// Emits of messages the target cannot be asked for again (an IRC line, a pushed feed's event): there is no cursor to
// hold back, so a refused one is dropped either way. Each emit keeps its connection's slot (line_connection::hold)
// until the host answered, so the reader pauses while too many are unanswered. Refusals are counted apart: final ones
// (invalid_message, channel_not_found; the host has recorded their `error` event) as lines_refused, any other as
// lines_not_stored, each logged at its 1st, 2nd, 4th, 8th, ... with the code (a final one's message names the
// field), never the text: a target flooding bad input costs a handful of log lines. Any thread.
#pragma once

#include <xconn/adapter/emit_refusal.hpp>
#include <xconn/host_services.hpp>

#include <memory>
#include <string>

namespace xconn::adapter {

class unrepeatable_emits {
 public:
  // log_prefix starts every log line, e.g. "irc: ".
  unrepeatable_emits(sdk::host host, std::string log_prefix)
      : host_(host), prefix_(std::make_shared<const std::string>(std::move(log_prefix))) {}

  void emit(const std::string& channel, const std::string& message_json, std::shared_ptr<void> slot) const {
    host_.emit(channel, message_json, [host = host_, prefix = prefix_, tallies = tallies_, slot](auto r) {
      if (r.ok) return;
      bool final_refusal = emit_refused_for_good(r.failure.code);
      host.count(final_refusal ? "lines_refused" : "lines_not_stored");
      if (auto n = (final_refusal ? tallies->refused : tallies->not_stored).count())
        host.warn(*prefix + std::to_string(n) +
                  (final_refusal ? " line(s) refused by the host, dropped (last: " + r.failure.code + ": " +
                                       r.failure.message + ")"
                                 : " message(s) not stored (last: " + r.failure.code + ")"));
    });
  }

 private:
  struct tallies {
    refusal_tally refused, not_stored;
  };

  sdk::host host_;
  std::shared_ptr<const std::string> prefix_;
  std::shared_ptr<tallies> tallies_ = std::make_shared<tallies>();  // outlives the adapter in a late answer
};

}  // namespace xconn::adapter

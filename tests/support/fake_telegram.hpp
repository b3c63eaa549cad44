// The fake Telegram Bot API (tests/fakes/fake_bot_api.py) as a child process on a loopback port, and the calls a
// test makes to its /control routes: bots, chats, updates to deliver, faults, and what the bots sent.
#pragma once

#include "support/daemon_process.hpp"
#include "support/wire_client.hpp"

#include <boost/json.hpp>

#include <memory>
#include <string>
#include <vector>

namespace xconn::test {

class fake_telegram {
 public:
  // tls: serve HTTPS with a self-signed certificate for 127.0.0.1 made for it (ca_file() names it).
  explicit fake_telegram(bool tls = false);
  unsigned short port() const { return port_; }
  std::string base_url() const { return (tls_ ? "https://127.0.0.1:" : "http://127.0.0.1:") + std::to_string(port_); }
  std::string ca_file() const { return (dir_.path() / "cert.pem").string(); }

  void add_bot(const std::string& token, long long id, const std::string& username);
  void add_chat(long long id, const std::string& type, const std::string& title);
  // A message update for the bot of token; returns its update_id.
  long long add_update(const std::string& token, const boost::json::object& message);
  // An update as given ({"message"} or {"channel_post"}, with an "update_id" of the test's choosing or none).
  long long add_raw_update(const std::string& token, const boost::json::object& update);
  // Many message updates at once, in order (one control call).
  void add_updates(const std::string& token, const boost::json::array& messages);
  // A file the bot can fetch: getFile(file_id) names path, GET /file/bot<token>/<path> serves bytes.
  void add_file(const std::string& file_id, const std::string& path, const std::string& bytes);
  // The next `times` calls of method answer status (and retry_after, when not 0). Method "*" meets every method;
  // status 0 closes the connection without an answer (the Bot API down or cut off).
  void add_fault(const std::string& method, int status, const std::string& description, int times = 1,
                 int retry_after = 0);
  // Ends every fault: the Bot API answers for real again.
  void clear_faults();
  // The times (unix seconds) of the last calls of method, faults included, oldest first.
  std::vector<double> call_times(const std::string& method);
  // {"sent": [...], "calls": {method: [unix s]}, "polls": {bot_id: {"calls","active","max_active","offsets"}},
  //  "pending": {bot_id: n}}
  boost::json::object state();

 private:
  boost::json::value control(const std::string& what, const boost::json::object& body);

  temp_dir dir_;  // its console
  std::unique_ptr<daemon_process> process_;
  unsigned short port_ = 0;
  unsigned short control_port_ = 0;  // plain HTTP, also when the Bot API side is HTTPS
  bool tls_ = false;
};

// A text message of a chat, as Telegram sends it in an update.
boost::json::object telegram_text(long long chat_id, const std::string& chat_type, long long message_id,
                                  long long from_id, const std::string& first_name, const std::string& text);

}  // namespace xconn::test

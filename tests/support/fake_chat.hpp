// A line-based chat server for the example adapter's tests (plugins/example/example_plugin.cpp names the protocol),
// on 127.0.0.1, port 0: users with passwords, one room whose messages are numbered, what the adapter sent, and an
// outage (go_away closes every connection and the port; come_back listens on the same port again).
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace xconn::test {

class fake_chat {
 public:
  explicit fake_chat(std::map<std::string, std::string> passwords);
  ~fake_chat();
  fake_chat(const fake_chat&) = delete;
  fake_chat& operator=(const fake_chat&) = delete;

  unsigned short port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

  // A message in the room from `from` (one word): numbered, kept, and sent to every signed-in connection.
  void say(const std::string& from, const std::string& text);
  // What the adapter sent with SEND, as "user: text", in order.
  std::vector<std::string> sent() const;
  int sign_ins() const;          // HELLOs answered OK
  int open_connections() const;  // signed in right now
  std::vector<long> sinces() const;  // each SINCE asked, in order
  void set_password(const std::string& user, const std::string& password);

  void go_away();
  void come_back();

 private:
  struct client;
  void listen();
  void accept_loop(int listener);
  void serve(std::shared_ptr<client> c);
  void send_to(client& c, const std::string& line);

  mutable std::mutex mutex_;
  std::map<std::string, std::string> passwords_;
  std::vector<std::string> history_;  // room lines "MSG <seq> <from> <text>", seq = index + 1
  std::vector<std::string> sent_;
  std::vector<long> sinces_;
  int sign_ins_ = 0;
  std::vector<std::shared_ptr<client>> clients_;
  std::vector<std::thread> threads_;
  int listener_ = -1;
  unsigned short port_ = 0;
};

}  // namespace xconn::test

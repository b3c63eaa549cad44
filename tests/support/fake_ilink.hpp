// The fake WeChat iLink bot API and CDN (tests/fakes/fake_ilink.py) as a child process on loopback ports, and the
// calls a test makes to its /control routes: the QR script, the bot a scan confirms, messages to deliver, media on
// the CDN, faults, expired tokens, and what the plugin sent, uploaded and asked.
#pragma once

#include "support/daemon_process.hpp"
#include "support/wire_client.hpp"

#include <boost/json.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace xconn::test {

class fake_ilink {
 public:
  // tls: the API and redirect ports serve HTTPS with a self-signed certificate for 127.0.0.1 (ca_file() names it);
  // the control port stays plain HTTP.
  explicit fake_ilink(bool tls = false);
  unsigned short port() const { return port_; }
  unsigned short redirect_port() const { return redirect_port_; }  // the "other data centre" of a redirect
  unsigned short control_port() const { return control_port_; }
  std::string base_url() const { return scheme() + "127.0.0.1:" + std::to_string(port_); }
  std::string cdn_base_url() const { return base_url() + "/c2c"; }
  std::string ca_file() const { return (dir_.path() / "cert.pem").string(); }

  // The steps each new qrcode's status polls take, one per poll, the last repeating (default wait, scaned,
  // confirmed): wait, scaned, scaned_but_redirect, expired, need_verifycode, verify_code_blocked, binded_redirect,
  // confirmed, and the faults http500, drop (no answer) and slow (wait after 6 s).
  void qr_script(const std::vector<std::string>& steps);
  // The bot the next confirm gives (else tok-<n>, bot-<n>@im.bot, user-<n>@im.wechat); the token is valid at once.
  void next_bot(const std::string& bot_token, const std::string& ilink_bot_id, const std::string& ilink_user_id);
  void poll_hold_ms(int ms);  // how long getupdates holds (and the longpolling_timeout_ms it answers); 35000
  void batch_size(int n);     // at most n messages per getupdates; 10
  // "full" (getuploadurl answers upload_full_url) or "param" (only upload_param).
  void upload_mode(const std::string& mode);

  // A WeixinMessage for the bot of bot_token to receive (seq added when absent); many at once, in order.
  void add_message(const std::string& bot_token, const boost::json::object& message);
  void add_messages(const std::string& bot_token, const boost::json::array& messages);

  struct media_ref {
    boost::json::object media;  // CDNMedia {encrypt_query_param, aes_key (absent for "none"), encrypt_type: 1}
    std::string aeskey_hex;     // the key as 32 hex digits, for an image_item's aeskey ("" for "none")
  };
  // bytes stored on the CDN, AES-128-ECB under a random key; key_form "raw" (aes_key = base64 of the 16 key bytes),
  // "hex" (base64 of the 32 hex digits) or "none" (stored in plain, no aes_key).
  media_ref add_media(const std::string& bytes, const std::string& key_form = "raw");

  // The next `times` calls of path ("getupdates", "sendmessage", "msg/notifystart", "get_qrcode_status",
  // "c2c/upload", "c2c/download", ... or "*") answer kind: "http500", "http429", "drop", "slow" (the real answer after 6 s),
  // "ret:-14", "ret:-2", "ret:-1".
  void add_fault(const std::string& path, const std::string& kind, int times = 1);
  void clear_faults();
  // Every later call with bot_token answers ret -14 (a held getupdates too).
  void expire_token(const std::string& bot_token);

  // {sent, typing, configs, uploads, downloads, qr_polls: [{qrcode, port}], qr_created, local_token_lists,
  //  polls: {ilink_bot_id: {calls, active, max_active, cursors}}, notify: {start, stop}, violations: [{path, what}]}
  boost::json::object state();

 private:
  std::string scheme() const { return tls_ ? "https://" : "http://"; }
  boost::json::value control(const std::string& what, const boost::json::object& body);

  temp_dir dir_;  // its console (and certificate)
  std::unique_ptr<daemon_process> process_;
  unsigned short port_ = 0;
  unsigned short control_port_ = 0;
  unsigned short redirect_port_ = 0;
  bool tls_ = false;
};

// A WeixinMessage from a user with one text item (message_type 1, user; message_state 2, finished).
boost::json::object wechat_text_message(const std::string& from_user, const std::string& text,
                                        std::int64_t message_id, const std::string& context_token);

}  // namespace xconn::test

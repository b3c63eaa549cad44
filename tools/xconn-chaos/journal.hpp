// What the client saw, one line per fact, appended and flushed at once so that it outlives every kill of the
// daemon (the driver itself is never killed): "kind<TAB>epoch<TAB>field..." in the order seen.
#pragma once

#include <fstream>
#include <string>
#include <vector>

namespace xconn::chaos {

struct journal_entry {
  std::string kind;
  int epoch = 0;
  std::vector<std::string> fields;
  const std::string& at(std::size_t i) const;  // "" past the end
};

// Kinds written (fields after the epoch):
//   setup       connector_id
//   channel     connector_channel_id
//   inject      message_id channel has_file          (the inject was answered 202: the message is durable)
//   deliver     message_id created_at files          (files: ref=expires_at,... or -)
//   ack         seq message_id                       (chat.message.ack accepted sent, seq counts per epoch)
//   confirm     seq                                  (every ack of this epoch up to seq is durable)
//   final_sent  message_id channel
//   final_ack   message_id status
//   tool_sent   idempotency_key channel
//   tool_result idempotency_key result_message_id
//   tool_error  idempotency_key code
//   file        file_ref sha256 expires_at byte_size (an upload answered 201)
//   over_limit  http_status file_ref                 (an upload past files.max_bytes: 413, file_ref -)
//   file_check  file_ref http_status sha256          (a download in the verification)
//   health      expired evicted rejected pending      (inbound counters at the verification)
class journal {
 public:
  explicit journal(const std::string& path);  // opens for appending
  void add(const std::string& kind, int epoch, const std::vector<std::string>& fields);
  static std::vector<journal_entry> read(const std::string& path);
  // The highest epoch in the journal (0 when none).
  static int last_epoch(const std::vector<journal_entry>& entries);

 private:
  std::ofstream out_;
};

}  // namespace xconn::chaos

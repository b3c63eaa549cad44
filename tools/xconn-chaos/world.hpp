// What earlier epochs left in the journal that the next one builds on: the connector_id, the channels, the
// finals accepted and the tool keys answered (to be repeated), and counters for fresh ids.
#pragma once

#include "journal.hpp"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace xconn::chaos {

struct world {
  std::string connector_id;
  std::vector<std::string> channels;
  std::vector<std::string> finals_accepted;              // message ids, in order
  std::vector<std::string> finals_unanswered;            // sent, no answer seen yet
  std::map<std::string, std::string> tool_results;       // key -> first result message_id
  std::vector<std::string> tools_unanswered;             // sent, no answer seen yet
  std::map<std::string, std::string> channel_of;         // final message_id or tool key -> its channel
  std::vector<std::string> files;                        // refs uploaded (201 seen)
  std::map<std::string, std::string> file_sha;           // ref -> sha256
  std::set<std::string> delivered_unacked;               // inbound pushed, no ack ever sent: each must come again
  int last_epoch = 0;

  static world from(const std::vector<journal_entry>& entries);
};

}  // namespace xconn::chaos

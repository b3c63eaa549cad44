#include "world.hpp"

#include <set>

namespace xconn::chaos {

world world::from(const std::vector<journal_entry>& entries) {
  world w;
  std::set<std::string> final_sent, final_answered, accepted, tool_sent, tool_answered;
  std::vector<std::string> final_order, tool_order;
  std::set<std::string> acked;
  for (const auto& e : entries) {
    if (e.kind == "setup") w.connector_id = e.at(0);
    else if (e.kind == "channel") w.channels.push_back(e.at(0));
    else if (e.kind == "final_sent") {
      w.channel_of.emplace(e.at(0), e.at(1));
      if (final_sent.insert(e.at(0)).second) final_order.push_back(e.at(0));
    } else if (e.kind == "final_ack") {
      final_answered.insert(e.at(0));
      if (e.at(1) == "accepted" && accepted.insert(e.at(0)).second) w.finals_accepted.push_back(e.at(0));
    } else if (e.kind == "tool_sent") {
      w.channel_of.emplace(e.at(0), e.at(1));
      if (tool_sent.insert(e.at(0)).second) tool_order.push_back(e.at(0));
    } else if (e.kind == "tool_result") {
      tool_answered.insert(e.at(0));
      w.tool_results.emplace(e.at(0), e.at(1));
    } else if (e.kind == "tool_error") {
      tool_answered.insert(e.at(0));
    } else if (e.kind == "deliver") {
      w.delivered_unacked.insert(e.at(0));
    } else if (e.kind == "ack") {
      acked.insert(e.at(1));
    } else if (e.kind == "file") {
      if (!w.file_sha.contains(e.at(0))) w.files.push_back(e.at(0));
      w.file_sha[e.at(0)] = e.at(1);
    }
  }
  for (const auto& id : final_order)
    if (!final_answered.contains(id)) w.finals_unanswered.push_back(id);
  for (const auto& k : tool_order)
    if (!tool_answered.contains(k)) w.tools_unanswered.push_back(k);
  std::erase_if(w.delivered_unacked, [&](const std::string& id) { return acked.contains(id); });
  w.last_epoch = journal::last_epoch(entries);
  return w;
}

}  // namespace xconn::chaos

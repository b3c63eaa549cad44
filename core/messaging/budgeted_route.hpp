// A route whose socket bounds what waits to be written (server.max_outbox_bytes, docs/protocol.md "Limits"). Deliveries
// go through it so that a peer that does not read holds them in the store, not in the socket's memory.
#pragma once

#include <functional>
#include <string>

namespace xconn {

class budgeted_route {
 public:
  virtual ~budgeted_route() = default;
  // Any thread. Queues packet unless the socket holds deliveries: its outbox reached the budget, and has not yet
  // drained below a quarter of it. Returns false then (packet untouched, written never called). At most one packet
  // is admitted below the budget, so the outbox stays within the budget plus one frame of these.
  virtual bool push_within_budget(std::string& packet, std::function<void(bool written)> written) = 0;
  // Whether deliveries are held now (a cheap look before building a packet); any thread.
  virtual bool holding_deliveries() const = 0;
  // Runs fn once deliveries are no longer held (posted to the socket's strand; at once when they are not held).
  // A socket that closes first never runs it: its channels get a new route instead.
  virtual void when_drained(std::function<void()> fn) = 0;
};

}  // namespace xconn

// Runs a coroutine on a plugin's own event loop, guarded: an exception it lets out is logged through the host (with
// the plugin's name first) and goes no further, so no plugin code throws into Asio's loop.
#pragma once

#include <xconn/plugin.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <exception>
#include <string>

namespace xconn::adapter {

inline void spawn_guarded(boost::asio::io_context& io, xconn::sdk::host host, std::string plugin,
                          boost::asio::awaitable<void> work) {
  boost::asio::co_spawn(io, std::move(work), [host, plugin = std::move(plugin)](std::exception_ptr e) {
    if (!e) return;
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      host.log(XCONN_LOG_ERROR, plugin + ": " + ex.what());
    } catch (...) {
      host.log(XCONN_LOG_ERROR, plugin + ": an unknown exception");
    }
  });
}

}  // namespace xconn::adapter

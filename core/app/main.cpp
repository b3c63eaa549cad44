// xconnd: the Connector Server daemon.
#include "core/base/config.hpp"
#include "core/base/log.hpp"
#include "core/app/open_file_limit.hpp"
#include "core/app/server.hpp"

#include <systemd/sd-daemon.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <pthread.h>
#include <string>

namespace {

void usage() {
  std::fputs(
      "usage: xconnd [--config FILE] [--check-config]\n"
      "  --config FILE    the YAML configuration (default conf/xconnd.yaml)\n"
      "  --check-config   validate the configuration and exit\n"
      "  --version        print the version and exit\n",
      stderr);
}

}  // namespace

int main(int argc, char** argv) {
  std::string config_path = "conf/xconnd.yaml";
  bool check_only = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--config" && i + 1 < argc) {
      config_path = argv[++i];
    } else if (arg == "--check-config") {
      check_only = true;
    } else if (arg == "--version") {
      std::printf("xconnd %s (%s)\n", XCONN_VERSION, XCONN_GIT_REV);
      return 0;
    } else {
      usage();
      return arg == "--help" || arg == "-h" ? 0 : 2;
    }
  }

  xconn::log::init();
  auto cfg = xconn::load_config(config_path);
  if (!cfg) {
    spdlog::error("config error: {}", cfg.error().what());
    return 2;
  }
  for (const auto& key : cfg->server.api_keys) xconn::log::add_secret(key);
  if (check_only) {
    spdlog::info("config ok: {}", config_path);
    return 0;
  }
  if (!cfg->log.file.empty()) spdlog::info("log: {} lines to {}", cfg->log.format, cfg->log.file);
  if (auto err = xconn::log::configure(cfg->log); !err.empty()) {
    spdlog::error("config error: {}", err);
    return 2;
  }

  auto files = xconn::raise_open_file_limit(static_cast<std::uint64_t>(cfg->server.max_connections));
  if (!files.enough())
    spdlog::warn("open-file limit: {} (hard limit {}), but server.max_connections {} needs {}: past about {} connections "
                 "new ones wait until others close; raise the hard limit (systemd LimitNOFILE=, ulimit -Hn)",
                 files.after, files.hard, cfg->server.max_connections, files.needed,
                 files.after > xconn::open_file_limit::reserve ? files.after - xconn::open_file_limit::reserve : 0);
  else if (files.after != files.before)
    spdlog::info("open-file limit raised from {} to {} (server.max_connections {} + {} for the rest)", files.before,
                 files.after, cfg->server.max_connections, xconn::open_file_limit::reserve);

  // Signals are taken by this thread alone (sigwait), so every thread started later blocks them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);   // read the YAML again, reload what changed (docs/operations.md)
  sigaddset(&signals, SIGUSR1);  // reopen log.file (logrotate's postrotate)
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  xconn::server server(std::move(*cfg));
  server.set_build(XCONN_VERSION, XCONN_GIT_REV);
  if (auto err = server.start(); !err.empty()) {
    spdlog::error("cannot start: {}", err);
    return 1;
  }
  if (!server.key_file().empty())
    spdlog::info("API key: generated on first start, kept in {} (mode 0600); xAgent sends it as "
                 "'Authorization: Bearer <key>'",
                 server.key_file());
  sd_notify(0, "READY=1");
  int sig = 0;
  while (sigwait(&signals, &sig) == 0 && (sig == SIGHUP || sig == SIGUSR1)) {
    if (sig == SIGUSR1) {
      if (xconn::log::reopen().empty()) spdlog::info("SIGUSR1: log file reopened");
      continue;  // a failure is logged by reopen itself
    }
    spdlog::info("SIGHUP: reading {} again and comparing plugins.dir with what is loaded", config_path);
    // The reload goes on in the background; systemd waits only for the request to be taken.
    sd_notify(0, "RELOADING=1");
    server.reload_config();
    sd_notify(0, "READY=1");
  }
  spdlog::info("signal {} received", strsignal(sig));
  sd_notify(0, "STOPPING=1");
  server.stop();
  return 0;
}

// What the fuzz targets share: an invariant check that aborts (so libFuzzer keeps the input as a crash) and the
// sample plugin the manifest, payload and emit targets read against.
#pragma once

#include "core/plugin_host/plugin_manifest.hpp"
#include "tests/support/sample_manifest.hpp"

#include <boost/json.hpp>

#include <cstdio>
#include <cstdlib>

// Unlike assert(), checked in every build type.
#define FUZZ_CHECK(cond)                                                                 \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      std::fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                      \
    }                                                                                    \
  } while (0)

namespace xconn::fuzz {

// The tests' sample plugin (tests/support/sample_manifest.hpp) with the auth flows of the auth-flow tests: a QR
// login and a form with secret, required and optional fields.
inline const plugin_manifest& sample_plugin() {
  static const plugin_manifest m = [] {
    auto manifest = test::sample_manifest();
    manifest["card"].as_object()["auth_flows"] = boost::json::parse(R"json([
      {"id": "sample_qr", "target_type": "im", "type": "qr_login", "title": "Scan a QR code"},
      {"id": "sample_token", "target_type": "im", "type": "form", "title": "Enter a token", "fields": [
        {"name": "token", "label": "Token", "input_type": "password", "required": true, "secret": true},
        {"name": "pin", "label": "PIN", "input_type": "text", "secret": true},
        {"name": "chat", "label": "Chat", "input_type": "text", "required": true},
        {"name": "note", "label": "Note", "input_type": "text", "default_value": "hi"}]}
    ])json");
    auto r = parse_manifest(boost::json::serialize(manifest), test::sample_build_json);
    FUZZ_CHECK(r.has_value());
    return *r;
  }();
  return m;
}

}  // namespace xconn::fuzz

// The plugin manifest and Connector Card validation (parse_manifest in core/plugin_host/plugin_manifest.cpp, which
// calls build_card in connector_card.cpp), fed a plugin's manifest JSON with the tests' build facts. Checked beyond
// not crashing and not throwing: a refused manifest says which field; an accepted one has a valid plugin id, a
// served card carrying the host's schema and the declared card id, options for exactly the card's tools, chat limits
// and tool timeouts within their bounds, and HTTP routes that are well-formed and found again by find_route().
#include "core/plugin_host/connector_card.hpp"
#include "core/plugin_host/plugin_manifest.hpp"
#include "fuzz/fuzz_check.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

using namespace xconn;

void check(const plugin_manifest& m) {
  FUZZ_CHECK(valid_plugin_id(m.id));
  FUZZ_CHECK(!m.card_id.empty());
  auto* schema = m.card.if_contains("schema");
  FUZZ_CHECK(schema && schema->is_string() && schema->as_string() == card_schema);
  auto* card_id = m.card.if_contains("connector_card_id");
  FUZZ_CHECK(card_id && card_id->is_string() && card_id->as_string() == m.card_id);
  FUZZ_CHECK(skill_name_for(m.card_id).starts_with("connector-"));

  std::size_t card_tools = 0;
  if (auto* tools = m.card.if_contains("tools"); tools && tools->is_array()) {
    for (const auto& t : tools->as_array()) {
      FUZZ_CHECK(t.is_object());
      auto* id = t.as_object().if_contains("tool_id");
      FUZZ_CHECK(id && id->is_string() && m.tools.count(std::string(id->as_string())) == 1);
      ++card_tools;
    }
  }
  FUZZ_CHECK(m.tools.size() == card_tools);
  for (const auto& [id, options] : m.tools) FUZZ_CHECK(options.timeout_ms >= 0 && options.timeout_ms <= 3600000);

  if (m.chat) {
    int longest = m.chat->unit == length_unit::characters ? 4000 : 65536;
    FUZZ_CHECK(m.chat->max_length >= 1 && m.chat->max_length <= longest);
    FUZZ_CHECK(m.chat->max_per_minute >= 0 && m.chat->max_per_minute <= 30);  // 0: the plugin paces itself
  }
  for (const auto& r : m.http_routes) {
    FUZZ_CHECK(r.path.starts_with("/"));
    FUZZ_CHECK(r.method == "GET" || r.method == "POST" || r.method == "PUT" || r.method == "DELETE");
    FUZZ_CHECK(m.has_route_path(r.path) || r.path.ends_with('}'));
    if (!r.path.ends_with('}')) FUZZ_CHECK(m.find_route(r.method, r.path) == &r);
  }
  (void)target_provider(m);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view manifest_json(reinterpret_cast<const char*>(data), size);
  auto r = parse_manifest(manifest_json, test::sample_build_json);
  if (!r) {
    FUZZ_CHECK(!r.error().empty());
    return 0;
  }
  check(*r);
  return 0;
}

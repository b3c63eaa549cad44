#include "core/channels/auth_flow.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <array>

namespace xconn {
namespace json = boost::json;

namespace {
constexpr std::array answer_fields{"qr_code_text", "qr_code_image", "message"};
constexpr std::array number_fields{"expires_at", "poll_interval_millis"};
constexpr std::size_t max_credentials = 16;
constexpr std::size_t max_field_bytes = 64 * 1024;  // a QR data URL fits; a runaway answer does not
constexpr std::size_t max_input_bytes = 16 * 1024;

boost::system::result<auth_answer, std::string> refused(std::string why) {
  return {boost::system::in_place_error, std::move(why)};
}
}  // namespace

const json::object* find_auth_flow(const plugin_manifest& manifest, std::string_view flow_id) {
  auto* flows = manifest.card.if_contains("auth_flows");
  if (!flows || !flows->is_array()) return nullptr;
  for (const auto& f : flows->as_array())
    if (f.is_object() && f.as_object().at("id").as_string() == flow_id) return &f.as_object();
  return nullptr;
}

namespace {

// The flow's declaration of the field name, or null.
const json::object* declared_field(const json::object& flow, std::string_view name) {
  auto* f = flow.if_contains("fields");
  if (!f || !f->is_array()) return nullptr;
  for (const auto& field : f->as_array())
    if (field.as_object().at("name").as_string() == name) return &field.as_object();
  return nullptr;
}

bool is_secret_field(const json::object& field) {
  auto* secret = field.if_contains("secret");
  auto* type = field.if_contains("input_type");
  return (secret && secret->is_bool() && secret->as_bool()) ||
         (type && type->is_string() && type->as_string() == "password");
}

}  // namespace

std::string secret_inputs_json(const json::object& flow, const json::object* input) {
  if (!input) return {};
  json::object secrets;
  for (const auto& kv : *input)
    if (auto* field = declared_field(flow, kv.key()); field && is_secret_field(*field)) secrets[kv.key()] = kv.value();
  return secrets.empty() ? std::string() : json::serialize(secrets);
}

std::string check_auth_input(const json::object& flow, const json::object* input, std::vector<std::string>& secrets) {
  const json::array* fields = nullptr;
  if (auto* f = flow.if_contains("fields"); f && f->is_array()) fields = &f->as_array();
  auto declared = [&](std::string_view name) { return declared_field(flow, name); };
  if (input) {
    for (const auto& kv : *input) {
      auto* field = declared(kv.key());
      if (!field) return "input." + std::string(kv.key().substr(0, 64)) + ": not a field of this flow";
      if (!kv.value().is_string()) return "input." + std::string(kv.key()) + ": must be a string";
      if (kv.value().as_string().size() > max_input_bytes) return "input." + std::string(kv.key()) + ": too long";
      if (is_secret_field(*field)) secrets.emplace_back(kv.value().as_string());
    }
  }
  if (fields) {
    for (const auto& f : *fields) {
      const auto& field = f.as_object();
      auto* required = field.if_contains("required");
      if (!required || !required->is_bool() || !required->as_bool()) continue;
      auto name = field.at("name").as_string();
      auto* v = input ? input->if_contains(name) : nullptr;
      if (!v || v->as_string().empty()) return "input." + std::string(name) + ": required";
    }
  }
  return "";
}

boost::system::result<auth_answer, std::string> parse_auth_answer(std::string_view text, bool for_status) {
  boost::system::error_code ec;
  auto v = json::parse(text, ec);
  if (ec || !v.is_object()) return refused(std::string("the answer is not a JSON object"));
  auto& o = v.as_object();
  auto* status = o.if_contains("status");
  static constexpr std::array statuses{"pending", "scanned", "authenticated", "expired", "qr_refresh_required",
                                       "failed", "unauthenticated"};
  if (!status || !status->is_string() ||
      std::find(statuses.begin(), statuses.end(), status->as_string()) == statuses.end() ||
      (!for_status && status->as_string() == "unauthenticated"))
    return refused(std::string("status is not an auth status"));
  auth_answer out;
  out.status = status->as_string();
  for (const auto& kv : o) {
    auto key = kv.key();
    if (key == "status") continue;
    if (std::find(answer_fields.begin(), answer_fields.end(), key) != answer_fields.end()) {
      if (!kv.value().is_string() || kv.value().as_string().size() > max_field_bytes)
        return refused(std::string(key) + " must be a string of at most 64 KiB");
      out.fields[key] = kv.value();
    } else if (std::find(number_fields.begin(), number_fields.end(), key) != number_fields.end()) {
      if (!kv.value().is_int64() || kv.value().as_int64() < 0) return refused(std::string(key) + " must be a non-negative integer");
      out.fields[key] = kv.value();
    } else if (key == "binding") {
      if (!kv.value().is_object()) return refused(std::string("binding must be an object"));
      out.binding = kv.value().as_object();
    } else if (key == "credentials") {
      if (!kv.value().is_object() || kv.value().as_object().size() > max_credentials)
        return refused("credentials must be an object of at most " + std::to_string(max_credentials) + " strings");
      for (const auto& c : kv.value().as_object())
        if (!c.value().is_string() || c.value().as_string().size() > max_field_bytes || c.key().size() > 64)
          return refused(std::string("each credential must be a string of at most 64 KiB under a short name"));
      out.credentials = kv.value().as_object();
    } else {
      return refused(std::string(key) + ": unknown key");
    }
  }
  if (out.status == "authenticated" && !out.binding) out.binding.emplace();
  if (out.status != "authenticated" && out.binding) return refused(std::string("binding comes with authenticated only"));
  if (out.status != "authenticated" && out.credentials)
    return refused(std::string("credentials come with authenticated only"));
  return out;
}

std::optional<auth_run_state> run_ended_without_sign_in(std::string_view answer_status) {
  if (answer_status == "expired") return auth_run_state::expired;
  if (answer_status == "unauthenticated") return auth_run_state::canceled;
  return std::nullopt;
}

bool mentions_secret(std::string_view text, const std::vector<std::string>& secrets) {
  for (const auto& s : secrets)
    if (s.size() >= 8 && text.find(s) != std::string_view::npos) return true;
  return false;
}

std::string sealed_credentials_json(std::string_view secret_inputs, const json::object* plugin_credentials) {
  if (!plugin_credentials || plugin_credentials->empty()) return std::string(secret_inputs);
  json::object sealed;
  if (!secret_inputs.empty()) sealed = json::parse(secret_inputs).as_object();  // the host's own JSON
  for (const auto& kv : *plugin_credentials) sealed[kv.key()] = kv.value();
  return json::serialize(sealed);
}

}  // namespace xconn

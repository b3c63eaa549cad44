// Auth flows as the card declares them (spec §4.1 auth_flows, §8.7-8.10): the host's checks of form input
// before a plugin sees it, and of a plugin's answer before xAgent sees it.
#pragma once

#include "core/channels/channel_table.hpp"
#include "core/plugin_host/plugin_manifest.hpp"

#include <boost/json/object.hpp>
#include <boost/system/result.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace xconn {

// The card's flow with this id, or null.
const boost::json::object* find_auth_flow(const plugin_manifest& manifest, std::string_view flow_id);

// Checks input (null when absent) against the flow: a form needs every required field as a non-empty string
// and no undeclared field; a qr_login flow takes none. Returns "" when valid, else a reason that names the
// field and never its value. Appends the values of secret and password fields to secrets.
std::string check_auth_input(const boost::json::object& flow, const boost::json::object* input,
                             std::vector<std::string>& secrets);

// The input fields the flow marks secret (or password), by name, as a JSON object's text; "" when none. What the
// host keeps sealed as the channel's credentials.
std::string secret_inputs_json(const boost::json::object& flow, const boost::json::object* input);

// A plugin's auth answer (plugin.h): its status and the display fields xAgent may see.
struct auth_answer {
  std::string status;
  boost::json::object fields;  // qr_code_text, qr_code_image, expires_at, poll_interval_millis, message
  std::optional<boost::json::object> binding;  // with authenticated
  // With authenticated (ABI 1.8): what the plugin obtained in the run and wants sealed as the channel's
  // credentials beside the secret inputs (a QR sign-in's token), string values only. Never passed on.
  std::optional<boost::json::object> credentials;
};

// for_status: auth.status may also answer "unauthenticated". The error says what is wrong, for the log.
boost::system::result<auth_answer, std::string> parse_auth_answer(std::string_view json, bool for_status);

// Whether a plugin's auth answer of this status ends the run without a sign-in, and in which state: `expired` (the
// run's material ran out) and `unauthenticated` (the plugin holds no sign-in for it) end it, and from then on its
// record answers auth.status (expired, or unauthenticated as a canceled run does) without asking the plugin.
// nullopt for an answer the run goes on after (pending, scanned, qr_refresh_required) and for authenticated and
// failed, which the caller ends itself (a sign-in to record, a failure code to keep).
std::optional<auth_run_state> run_ended_without_sign_in(std::string_view answer_status);

// Whether text contains any of the secrets. Only secrets of at least 8 bytes count: a shorter one ("echo",
// "user") turns up in ordinary display text, and refusing such answers would lock its owner out.
bool mentions_secret(std::string_view text, const std::vector<std::string>& secrets);

// The channel's sealed credentials after a sign-in: the secret inputs (secret_inputs_json's text, "" for none) with
// the plugin's own credentials added (a plugin's value wins over an input of the same name); "" when both are empty.
std::string sealed_credentials_json(std::string_view secret_inputs, const boost::json::object* plugin_credentials);

}  // namespace xconn

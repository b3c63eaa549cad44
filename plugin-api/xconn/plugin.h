/*
 * xconn plugin ABI, version 1.
 *
 * The only contract between the xconn host and a plugin (.so). Plain C: no exception, no C++ or Boost
 * type crosses it, so a plugin built by another compiler or against another Boost still loads.
 *
 * Naming shows direction: xconn_plugin_on_* is what the plugin implements, xconn_host_* what the host
 * provides. Every struct starts with its size and version so either side can tell what the other knows.
 * Strings are UTF-8 (pointer, length) pairs and are NOT NUL-terminated; JSON travels as text.
 *
 * Loading: the host opens {plugin_id}.so, looks up XCONN_PLUGIN_ENTRY_SYMBOL and calls it with its own
 * API major. The plugin returns its table (or NULL when it cannot serve that host). A table whose
 * api_major differs from the host's is refused with a log line and a health entry.
 *
 * Compatibility within a major: a plugin built against an older 1.x header keeps loading on a newer 1.x host.
 * The host reads the plugin's table up to its struct_size (at least XCONN_PLUGIN_API_1_0_SIZE) and treats every
 * hook past it as NULL. Each hook below is marked Required (the table is refused without it) or Optional (NULL
 * is allowed; the host then does what the hook's comment says). A manifest that declares a feature needs the
 * hooks that serve it (auth_flows: the four auth hooks; http_routes: on_http; delivery.can_edit: on_update;
 * delivery.typing: on_activity). Fields are only ever appended, so an old table is a prefix of today's.
 */
#ifndef XCONN_PLUGIN_H
#define XCONN_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define XCONN_PLUGIN_API_MAJOR 1u
#define XCONN_PLUGIN_API_MINOR 8u
#define XCONN_PLUGIN_ENTRY_SYMBOL "xconn_plugin_entry"

/* A borrowed UTF-8 string. OWNERSHIP: the caller owns data; it is valid only during the call. */
typedef struct xconn_str {
  const char* data;
  size_t size;
} xconn_str;

typedef enum xconn_log_level {
  XCONN_LOG_DEBUG = 0,
  XCONN_LOG_INFO = 1,
  XCONN_LOG_WARN = 2,
  XCONN_LOG_ERROR = 3
} xconn_log_level;

/* The one health vocabulary (AIOS seed 004): /health maps it to ok / degraded / down. */
typedef enum xconn_health {
  XCONN_HEALTH_HEALTHY = 0,
  XCONN_HEALTH_DEGRADED = 1,
  XCONN_HEALTH_DOWN = 2
} xconn_health;

typedef enum xconn_status {
  XCONN_STATUS_OK = 0,
  /* A business failure: the json is {"code": "...", "message": "...", "retryable": bool}. */
  XCONN_STATUS_ERROR = 1
} xconn_status;

/* One call the host started (start, stop, a tool invocation, ...). OWNERSHIP: the host owns it; it stays
 * valid until the plugin completes it with xconn_host_complete, which it must do exactly once, from any
 * thread, now or later. The host enforces its own time limit; a completion after it is dropped safely. */
typedef struct xconn_call xconn_call;

/* The answer to one emit. status OK: message_id is the host's id for it and the message is durable in the
 * host's store (duplicate != 0: its msg_id was already taken and nothing new was stored). status ERROR: code
 * (invalid_message, channel_not_found, store_failed, ...) and a short message saying why. Strings are valid
 * during the callback only. */
typedef struct xconn_emit_result {
  uint32_t struct_size;
  xconn_status status;
  xconn_str message_id;
  int duplicate;
  xconn_str code;
  xconn_str message;
} xconn_emit_result;

/* Runs exactly once per emit, from any thread, possibly before xconn_host_emit returns. */
typedef void (*xconn_emit_done)(void* user, const xconn_emit_result* result);

/* The answer to storing one file. status OK: file_json is its IM file item {"file_ref", "type", "filename",
 * "mime_type", "byte_size", "expires_at"}, durable in the host's store. status ERROR: code (channel_not_found,
 * payload_too_large, store_failed, discarded) and a short message. Strings are valid during the callback only. */
typedef struct xconn_file_result {
  uint32_t struct_size;
  xconn_status status;
  xconn_str file_json;
  xconn_str code;
  xconn_str message;
} xconn_file_result;

/* Runs exactly once per xconn_host_file_end, from any thread, possibly before it returns. */
typedef void (*xconn_file_done)(void* user, const xconn_file_result* result);

/* Since 1.3. Runs once when the store has room again (xconn_host_file_write_nowait), from any thread. */
typedef void (*xconn_file_ready)(void* user);

/* One file being stored. OWNERSHIP: the host owns it from xconn_host_file_begin until xconn_host_file_end, which
 * the plugin must call exactly once. */
typedef struct xconn_file_upload xconn_file_upload;

/* Since 1.3. One request to a route the manifest declares, whole (a webhook checks a signature over the raw body
 * and its headers). OWNERSHIP: the host's; valid during the call only. */
typedef struct xconn_http_request {
  uint32_t struct_size;
  xconn_str method;
  xconn_str path;          /* below the connector's base path: "/in/cch_abc" */
  xconn_str path_param;    /* the value of the route's last segment when it is a {param}; empty otherwise */
  xconn_str query;         /* the raw query string, without '?' */
  xconn_str headers_json;  /* {"name": "value"}: lowercase names, repeated ones joined with ", "; a route that
                              needs the API key does not get the authorization header */
  xconn_str body;          /* the raw bytes */
} xconn_http_request;

/* Since 1.3. One write to the plugin's key-value store: put key = value, or delete key (erase != 0; value
 * ignored). An array of ops is read with a stride of ops[0].struct_size, so a newer header's larger op still
 * reads. Keys are 1..512 bytes, values at most 65536 bytes, both any bytes. */
typedef struct xconn_kv_op {
  uint32_t struct_size;
  int erase;
  xconn_str key;
  xconn_str value;
} xconn_kv_op;

/* Runs exactly once per write, from any thread, possibly before the write call returns. status OK: every op is
 * durable. status ERROR: none is; code is invalid_argument, kv_quota_exceeded or store_failed, message says why.
 * Strings are valid during the callback only. */
typedef void (*xconn_kv_done)(void* user, xconn_status status, xconn_str code, xconn_str message);

/* One key and its value, valid during the visit only. Return non-zero to go on, 0 to stop. */
typedef int (*xconn_kv_visit)(void* user, xconn_str key, xconn_str value);
/* Since 1.7: what xconn_host_file_info tells of a file (borrowed strings, valid during the call only). */
typedef void (*xconn_file_info_visit)(void* user, xconn_str filename, xconn_str mime_type, uint64_t byte_size);

typedef struct xconn_host_api {
  uint32_t struct_size;
  uint32_t api_major;
  uint32_t api_minor;
  /* OWNERSHIP: the host owns host_ctx; valid from on_create until on_destroy returns. */
  void* host_ctx;

  /* One line in the host log, tagged with the plugin id. Auth-group values are redacted by the host. */
  void (*xconn_host_log)(void* host_ctx, xconn_log_level level, xconn_str text);

  /* The plugin's health changed. last_error_code is a stable code or empty. */
  void (*xconn_host_report_health)(void* host_ctx, xconn_health health, xconn_str last_error_code);

  /* Completes a call. json is the result (status OK) or an error object (status ERROR); the host copies it
   * before returning. */
  void (*xconn_host_complete)(xconn_call* call, xconn_status status, xconn_str json);

  /* Since 1.1. One inbound message from the target to one channel (seed 002's emit). message_json:
   *   {"text" (required), "channel_key", "sender_id", "sender_name", "msg_id", "at" (unix ms), "trigger",
   *    "context_text", "role", "modality" ("text" | "voice")}
   * The host validates it and commits it to the channel's queue before done reports OK; from then on it is
   * the host's to deliver (at least once, in order). A message the host refuses is not stored at all. */
  void (*xconn_host_emit)(void* host_ctx, xconn_str connector_channel_id, xconn_str message_json,
                          xconn_emit_done done, void* user);

  /* Since 1.1. Shared consumers (seed 000's third owner): one target consumer (a bot token's poller, an app's
   * event stream) serves every channel signed in with that credential. consumer_key names the credential
   * without being it (a hash, an app id): the host stores it and shows counts, never the credential.
   * acquire records that the channel uses the consumer (durably; idempotent per channel) and returns the number
   * of channels that now hold it: 1 means this is the first, so start it. release drops the channel's
   * reference. The host drops a channel's references itself when the channel is signed out or deregistered, and
   * calls on_consumer_stop when, and only when, the last reference went. Returns -1 on a bad argument. */
  int (*xconn_host_consumer_acquire)(void* host_ctx, xconn_str connector_channel_id, xconn_str consumer_key);
  void (*xconn_host_consumer_release)(void* host_ctx, xconn_str connector_channel_id, xconn_str consumer_key);

  /* Since 1.2. The host's file store (docs/protocol.md "Files"): an inbound attachment, fetched from the target at once
   * (its CDN links expire), is streamed in with begin / write... / end and then emitted as {"files":
   * [{"file_ref"}]}; the host gives xAgent a signed download_url. The file is bound to the channel and expires
   * after files.ttl_s. begin returns NULL when the channel is not one of this plugin's. write returns 0, or -1
   * once the file passed files.max_bytes or the store failed (then end reports why); it may wait while the store
   * catches up, so call it from the plugin's own threads, as every plugin call is. end with keep = 0 discards. */
  xconn_file_upload* (*xconn_host_file_begin)(void* host_ctx, xconn_str connector_channel_id, xconn_str filename,
                                              xconn_str mime_type);
  int (*xconn_host_file_write)(xconn_file_upload* upload, const void* data, size_t size);
  void (*xconn_host_file_end)(xconn_file_upload* upload, int keep, xconn_file_done done, void* user);

  /* Since 1.2. Reads the bytes of a file of the channel (an upload xAgent named in a final's files, which send()
   * receives as items with file_ref, filename, mime_type, byte_size): up to capacity bytes from offset into
   * buffer. Returns the number of bytes read (0 at the end), or -1 when there is no such file on the channel. */
  int64_t (*xconn_host_file_read)(void* host_ctx, xconn_str connector_channel_id, xconn_str file_ref, uint64_t offset,
                                  void* buffer, size_t capacity);

  /* Since 1.3. The plugin's own key-value store, durable in the host's LMDB and kept across restarts, hot reloads
   * and new builds (docs/plugin-api.md "State"): a target cursor, a channel's target ids. Not for credentials.
   * Each plugin sees only its own keys; the total of its keys and values is bounded by plugins.kv_quota_bytes.
   * Reads see every write whose done reported OK. Any thread. Check struct_size before calling: an older host's
   * table ends before these. */
  /* Copies up to capacity bytes of key's value into buffer and returns the value's size (larger than capacity:
   * call again with a buffer that size); -1 when the key is absent, -2 when the key is invalid. */
  int64_t (*xconn_host_kv_get)(void* host_ctx, xconn_str key, void* buffer, size_t capacity);
  /* Visits every key starting with prefix (empty: all), in byte order. Returns how many were visited. */
  size_t (*xconn_host_kv_scan)(void* host_ctx, xconn_str prefix, xconn_kv_visit visit, void* user);
  /* Commits count ops together (all or none) and then runs done. */
  void (*xconn_host_kv_write)(void* host_ctx, const xconn_kv_op* ops, size_t count, xconn_kv_done done, void* user);
  /* xconn_host_emit, with ops committed in the same transaction as the message: a target cursor advanced here
   * moves exactly when the messages read before it are durable, so a crash can neither lose nor repeat one. The
   * ops are committed with a duplicate (its msg_id already taken) too, and with nothing when the emit is refused;
   * a refused op refuses the emit (code as for kv_write). */
  void (*xconn_host_emit_with)(void* host_ctx, xconn_str connector_channel_id, xconn_str message_json,
                               const xconn_kv_op* ops, size_t count, xconn_emit_done done, void* user);

  /* Since 1.3. The state of one signed-in channel's binding, as the target shows it (spec §9): report_json is
   *   {"status": "connected" | "degraded" | "offline" | "expired" | "revoked" | "error",
   *    "tools": [{"tool_id", "status", "target_permission_state"}],   (tools optional: as in a binding)
   *    "reason": "target_unreachable"}   (optional: a short code why, [a-z_]{1,64}; /events and the admin list
   *                                       show it as status_reason, the descriptor never; older hosts refuse it)
   * The host keeps it (across restarts) and pushes the channel's descriptor: a token the target revoked shows
   * `revoked` and its tools `requires_reauth`. "connected" clears a report; a new sign-in or a sign-out clears it
   * too. Returns 0 when taken, -1 when refused (not a signed-in channel of this plugin, an invalid report: the
   * host logs why). Any thread. */
  int (*xconn_host_channel_status)(void* host_ctx, xconn_str connector_channel_id, xconn_str report_json);

  /* Since 1.3. xconn_host_file_write for a plugin with an event loop of its own: it never waits. Returns 0 when
   * the bytes were taken (write more), 1 when they were taken but the store is behind: ready(user) runs once,
   * from any thread and possibly before this returns, when it has room; write again only after that. -1 once the
   * file passed files.max_bytes or the store failed (end reports why); -2 when called while a ready is pending
   * (the bytes were not taken). end may be called at any time; a pending ready then still runs once. */
  int (*xconn_host_file_write_nowait)(xconn_file_upload* upload, const void* data, size_t size, xconn_file_ready ready,
                                      void* user);

  /* Since 1.3. Progress of a tool call still running (spec §8.20): call is the one on_invoke_tool got, before it
   * is completed. progress_json: {"message": "Processing" (at most 200 bytes), "progress": 0.0-1.0} (both
   * optional). The host pushes tool.progress.push to the socket that invoked the tool; the ack still ends the
   * call. Returns 0 when pushed, -1 when refused (not a tool call, malformed, or past 100 for this call). */
  int (*xconn_host_call_progress)(xconn_call* call, xconn_str progress_json);

  /* Since 1.3. Adds delta to the plugin's counter name ([a-z0-9_], 1-48 bytes; at most 64 names), shown in /metrics
   * as xconn_plugin_events_total{plugin="<id>",name="<name>"}: polls, sends, rate-limit waits, errors by code.
   * Returns 0, or -1 for a bad name or a new name past 64. Any thread. */
  int (*xconn_host_count)(void* host_ctx, xconn_str name, uint64_t delta);

  /* Since 1.4. The connector's absolute base URL as xAgent reaches it (server.public_base_url, else the bound
   * address, then "/connectors/<id>"), without a trailing slash: what a plugin shows for a route it serves (a
   * webhook's inbound URL). Copies at most capacity bytes to out and returns the full size (call again with
   * more room when it is larger); -1 before the server listens. Any thread. */
  int64_t (*xconn_host_base_url)(void* host_ctx, char* out, size_t capacity);

  /* Since 1.5. The consumer_key for xconn_host_consumer_acquire of the consumer that material identifies (the
   * credential and what it reaches, e.g. "host\nport\nnick\npassword"): 64 lowercase hex digits of
   * HMAC-SHA256(k, material), k = HMAC-SHA256(the store's sealing key, "xconn consumer key\0" + plugin id). The same
   * material gives the same key across restarts and reloads (so a plugin finds its consumers again), another plugin
   * gets another key, and without the sealing key (not in the store or its backups) a stored key cannot be checked
   * against a guessed credential. Writes 64 bytes to out (no NUL) and returns 64; -1 when capacity is under 64 or
   * material is empty or over 65536 bytes. Any thread. */
  int (*xconn_host_consumer_key)(void* host_ctx, xconn_str material, char* out, size_t capacity);

  /* Since 1.5. Deletes a file the plugin kept (xconn_host_file_end with keep) on the channel: the file_refs of an
   * emit the host answered as a duplicate (its msg_id taken: no message names them), or those kept before a later
   * attachment of the same message failed. Only the plugin knows which refs its message alone named (a retried
   * emit may name the first one's file), so the host never deletes on its own. The file is gone for downloads and
   * reads once this returns. Returns 0 when removed; -1 when file_ref is not a kept file of that channel of this
   * plugin (another plugin's or channel's, unknown, still being written, expired or already deleted); -2 when the
   * store could not commit the delete (the file stays until files.ttl_s). It waits for the store, so call it from
   * the plugin's own threads, as every plugin call is (as xconn_host_file_write). */
  int (*xconn_host_file_delete)(void* host_ctx, xconn_str connector_channel_id, xconn_str file_ref);

  /* Since 1.6. The canonical approval_request (AIOS seed 004): the target asks for a decision on one channel (a
   * payment to confirm, a join to accept). request_json is the plugin's description of it (metadata; the host does
   * not keep it). Protocol 3.0 has no packet that carries an approval to xAgent, so until a profile defines one this
   * host refuses every request: done runs once, on the calling thread before this returns, with status ERROR, code
   * "unsupported" and a message saying why, and the host records an `error` event (payload "kind":
   * "approval_request", "code": "unsupported") on {base}/events. A later host that carries approvals answers OK with
   * the approval's id in message_id. Check struct_size before calling: an older host's table ends before this. */
  void (*xconn_host_approval_request)(void* host_ctx, xconn_str connector_channel_id, xconn_str request_json,
                                      xconn_emit_done done, void* user);

  /* Since 1.7. What the host stored of a file of the channel, the same files xconn_host_file_read reads (an upload
   * xAgent named, or one the plugin kept there): its name and MIME type as stored, and its size in bytes. A tool
   * names a file by its file_ref alone; with this the plugin sends it on as it was uploaded (report.pdf,
   * application/pdf) instead of guessing from its bytes. visit(user, ...) runs once, on the calling thread before
   * this returns, and 0 is returned; -1 when file_ref is not a file of that channel of this plugin (another
   * plugin's or channel's, unknown, still being written or expired; visit does not run). Any thread. Check
   * struct_size before calling: an older host's table ends before this. */
  int (*xconn_host_file_info)(void* host_ctx, xconn_str connector_channel_id, xconn_str file_ref,
                              xconn_file_info_visit visit, void* user);
} xconn_host_api;

typedef struct xconn_plugin_api {
  uint32_t struct_size;
  uint32_t api_major;
  uint32_t api_minor;

  /* Static declaration as JSON: {"id", "card", "tool_options", "skill", "system_prompt", "chat",
   * "capability"}; see docs/plugin-api.md. OWNERSHIP: the plugin; valid while the library is loaded. */
  xconn_str manifest_json;

  /* {"version", "git_tag", "git_rev", "build_time"} stamped when the plugin was built. Same ownership. */
  xconn_str build_json;

  /* Checks the plugin's own config section {"auth":{...},"config":{...},"route":{...},"policy":{...}}.
   * Returns 0 when valid; otherwise writes a NUL-terminated reason naming the key ("config.greeting:
   * must be a string") into error (at most error_capacity bytes) and returns non-zero. Never logs values. */
  /* Required. */
  int (*xconn_plugin_on_validate_config)(xconn_str config_json, char* error, size_t error_capacity);

  /* Makes one instance with a validated config. OWNERSHIP: host stays owned by the host and outlives the
   * instance. Returns NULL on failure (after logging why through host). */
  /* Required. */
  void* (*xconn_plugin_on_create)(const xconn_host_api* host, xconn_str config_json);

  /* Frees the instance. Called once, after stop completed or timed out, never concurrently with a call. */
  /* Required. */
  void (*xconn_plugin_on_destroy)(void* instance);

  /* Opens connections, timers, listeners. The host allows 5 s. */
  /* Required. */
  void (*xconn_plugin_on_start)(void* instance, xconn_call* call);

  /* Closes everything start opened; safe to call more than once. The host allows 5 s. */
  /* Required. */
  void (*xconn_plugin_on_stop)(void* instance, xconn_call* call);

  /* Runs one tool on one channel. arguments_json is the raw payload.arguments object; context_json the
   * payload.context object ("{}" when absent). Completes with the result object, or an error whose code is
   * the plugin's stable business code. */
  /* Required. */
  void (*xconn_plugin_on_invoke_tool)(void* instance, xconn_call* call, xconn_str connector_channel_id,
                                      xconn_str tool_id, xconn_str arguments_json, xconn_str context_json);

  /* Auth flows on one channel (spec §8.7-8.14). The host has already checked the channel, the flow id and,
   * for a form flow, the input against the card's fields (required present, nothing unknown, strings only).
   * auth_session_id is issued by the host; later status and cancel calls name it. Completes with an auth
   * answer, every key optional but status:
   *   {"status": "pending" | "scanned" | "authenticated" | "unauthenticated" | "expired" |
   *              "qr_refresh_required" | "failed",
   *    "qr_code_text", "qr_code_image", "expires_at" (unix ms), "poll_interval_millis", "message",
   *    "binding": {...}}
   * or with an error whose code is the business reason (invalid_credentials, ...). binding comes with
   * "authenticated" only: the channel's target identity at display level, which the host stores durably and
   * builds descriptors from: {"display_name", "account_hint", "tools": [{"tool_id", "status",
   * "target_permission_state"}]} (tools optional: absent means every card tool is available and granted).
   * Nothing here may hold a credential: the host refuses an answer that repeats a secret input.
   * "qr_refresh_required" (the material went stale, the run goes on): the host calls auth_status with refresh at
   * once and passes that answer on. "expired": the run is over; the host answers it from its record after.
   * Since 1.8 an "authenticated" answer may carry "credentials": {"name": "value", ...} (at most 16 strings): what
   * the run obtained from the target (a QR sign-in's token). The host seals them with the secret inputs as the
   * channel's credentials, hands them back at on_channel_restore, and never passes them on; an answer whose other
   * keys repeat one of them is refused. An older host refuses the key: check api_minor first. */
  /* Optional (added after the first 1.0 table; needed when the card declares auth_flows). */
  void (*xconn_plugin_on_auth_start)(void* instance, xconn_call* call, xconn_str connector_channel_id,
                                     xconn_str flow_id, xconn_str auth_session_id, xconn_str input_json);
  /* refresh != 0: issue new material (a new QR code). Completes with an auth answer as above. */
  /* Optional, with auth_start. */
  void (*xconn_plugin_on_auth_status)(void* instance, xconn_call* call, xconn_str connector_channel_id,
                                      xconn_str flow_id, xconn_str auth_session_id, int refresh);
  /* Abandons an unfinished flow run; the channel's existing login, if any, stays. Completes with {}. */
  /* Optional, with auth_start. */
  void (*xconn_plugin_on_auth_cancel)(void* instance, xconn_call* call, xconn_str connector_channel_id,
                                      xconn_str flow_id, xconn_str auth_session_id);
  /* Signs the channel out of the target and clears its login material. Idempotent. Completes with {}. */
  /* Optional, with auth_start. NULL: a sign-out has nothing to clear in the plugin. */
  void (*xconn_plugin_on_auth_logout)(void* instance, xconn_call* call, xconn_str connector_channel_id);

  /* Since 1.1. One outbound reply: the final chat.message of an assistant message. reply_json:
   *   {"idempotency_key" (the final's message_id: the same key is sent at most once), "text",
   *    "files": [{"file_ref", "type", "filename", "mime_type", "byte_size", "download_url" (since 1.3: signed,
   *               absolute, valid for files.url_ttl_s; a secret: never log it)}], "channel_key",
   *    "reply_to": {"id", "sender_id", "sender_name", "role"} (where the manifest declares chat)}
   * Completes with {"ok": bool, "error": code, "retryable": bool, "message", "external_key", "verified"}
   * (verified defaults to ok), or with an error (read as ok false). The host allows delivery.send_timeout_s. */
  /* Optional. NULL: a final fails with not_supported (not retryable). */
  void (*xconn_plugin_on_send)(void* instance, xconn_call* call, xconn_str connector_channel_id,
                               xconn_str reply_json);
  /* Since 1.1. Only for a plugin whose manifest says delivery.can_edit: the assistant message so far, on each
   * new delta (create the target message on the first, edit it after). Completes with {}. */
  /* Optional (needed with delivery.can_edit). */
  void (*xconn_plugin_on_update)(void* instance, xconn_call* call, xconn_str connector_channel_id,
                                 xconn_str message_id, xconn_str text_so_far);
  /* Since 1.1. Only for a plugin whose manifest says delivery.typing: status "thinking", "tool" (tool_name set)
   * or "idle". The host sends "idle" itself on a final, the first delta, or its local timeout. Completes with {}. */
  /* Optional (needed with delivery.typing). */
  void (*xconn_plugin_on_activity)(void* instance, xconn_call* call, xconn_str connector_channel_id,
                                   xconn_str status, xconn_str tool_name);
  /* Since 1.1. One request to a route the manifest declares in http_routes, below the connector's base path
   * (path "/inject"). The host has checked the method and, unless the route is public, the API key; query is
   * the raw query string. Completes with {"status": 100-599, "content_type", "body" (a string)}. */
  /* Optional (needed with http_routes). NULL: the route answers 501. */
  void (*xconn_plugin_on_http)(void* instance, xconn_call* call, xconn_str method, xconn_str path,
                               xconn_str query, xconn_str body);
  /* Since 1.1. The last channel holding consumer_key let go of it: stop that consumer. Completes with {}. */
  /* Optional. NULL: nothing to stop. */
  void (*xconn_plugin_on_consumer_stop)(void* instance, xconn_call* call, xconn_str consumer_key);

  /* Since 1.3. After start (a process start or a hot reload), once for each signed-in channel of this plugin: its
   * binding and its credentials (the secret inputs it signed in with, as a JSON object; {} when none). Verify them
   * with the target and complete with a report as for xconn_host_channel_status ({"status": "connected" |
   * "degraded" | "offline" | "expired" | "revoked" | "error", "tools": [...]}); until then the channel's descriptor
   * says "authenticating" and its tools are unavailable. An error, or no answer within tools.timeout_s, reads as "error". */
  /* Optional. NULL: signed-in channels are shown connected at once (the 1.2 behaviour). */
  void (*xconn_plugin_on_channel_restore)(void* instance, xconn_call* call, xconn_str connector_channel_id,
                                          xconn_str binding_json, xconn_str credentials_json);

  /* Since 1.3. A request to a declared route, with its headers, path parameter and raw body. Completes like on_http,
   * plus "headers": {"name": "value"} to set (at most 16; not content-type, content-length, transfer-encoding,
   * connection, server or date, which are the host's). */
  /* Optional; used instead of on_http when set (a manifest with http_routes needs one of the two). */
  void (*xconn_plugin_on_http_request)(void* instance, xconn_call* call, const xconn_http_request* request);

  /* Since 1.3. A channel ended for this plugin; drop what it keeps for it (subscriptions, buffers, its state keys).
   * reason: "closed" (xAgent closed its route with channel.close: it stays registered and signed in, and its
   * messages wait in the host until it is opened again), "deregistered" (forced: its connector_id's lease ran out;
   * a signed-in channel got on_auth_logout first) or "expired" (a temporary channel nobody signed in). A sign-out
   * is on_auth_logout itself. Completes with {}; the answer changes nothing. */
  /* Optional. NULL: nothing to drop. */
  void (*xconn_plugin_on_channel_end)(void* instance, xconn_call* call, xconn_str connector_channel_id,
                                      xconn_str reason);
} xconn_plugin_api;

/* The size of a 1.0 plugin table (through xconn_plugin_on_invoke_tool): the smallest table a 1.x host accepts. */
#define XCONN_PLUGIN_API_1_0_SIZE \
  (offsetof(xconn_plugin_api, xconn_plugin_on_invoke_tool) + sizeof(((xconn_plugin_api*)0)->xconn_plugin_on_invoke_tool))

/* The one exported symbol. host_api_major lets a plugin that serves several majors pick its table. */
typedef const xconn_plugin_api* (*xconn_plugin_entry_fn)(uint32_t host_api_major);

#ifdef __cplusplus
}
#endif

#endif /* XCONN_PLUGIN_H */

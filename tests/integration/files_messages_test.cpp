// Files riding on messages on the real server: an injected attachment arrives in chat.message (IM v2) or
// message.push (IM v1) with a signed download_url, never as bytes; an outbound final may name an upload of its own
// channel only (IM v2 §5; IM v1 §5, §9; docs/protocol.md "Inbound messages", "Outbound messages").
#include "support/data_plane.hpp"
#include "support/files_fixture.hpp"
#include "support/files_helpers.hpp"
#include "support/server_fixture.hpp"
#include "support/wire_client.hpp"

#include "core/files/file_store.hpp"
#include "core/store/store.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace xconn::test {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

// The files echo stored for a message the host refuses are discarded with it, not kept for files.ttl_s; an accepted
// message's file stays.
TEST_F(Files, the_files_of_a_refused_emit_are_discarded) {
  auto item = [](const std::string& name) {
    return json::object{{"filename", name}, {"mime_type", "text/plain"}, {"content_base64", base64("data of " + name)}};
  };
  auto refused = inject(channel, {{"text", "bad"}, {"msg_id", 5}, {"files", json::array{item("a.txt"), item("b.txt")}}});
  EXPECT_EQ(refused.status, 400) << refused.body;
  EXPECT_NE(refused.body.find("invalid_message"), std::string::npos) << refused.body;
  ASSERT_EQ(inject(channel, {{"text", "good"}, {"files", json::array{item("c.txt")}}}).status, 202);
  ASSERT_TRUE(dp->next_push("chat.message", channel));
  auto path = server.cfg().store.path;
  dp.reset();
  server.stop();  // every write queued before is committed

  auto db = store::open({path, 1ull << 30, {std::string(file_store::files_db)}});
  ASSERT_TRUE(db) << db.error();
  std::vector<std::string> names;
  (*db)->scan(file_store::files_db, "", [&](std::string_view, std::string_view record) {
    names.emplace_back(record);
    return true;
  });
  ASSERT_EQ(names.size(), 1u);
  EXPECT_NE(names[0].find("c.txt"), std::string::npos) << names[0];
}

TEST_F(Files, an_injected_attachment_arrives_in_chat_message_with_a_signed_download_url) {
  auto png = png_bytes(3000);
  auto before = now_ms();
  auto r = inject(channel, {{"text", "see attached"},
                            {"files", json::array{json::object{{"filename", "a.png"}, {"mime_type", "image/png"},
                                                               {"content_base64", base64(png)}}}}});
  ASSERT_EQ(r.status, 202) << r.body;
  auto m = dp->next_push("chat.message", channel);
  ASSERT_TRUE(m);
  auto p = payload_of(*m);
  EXPECT_EQ(text_of(p, "text"), "see attached");
  ASSERT_TRUE(p.contains("files") && p.at("files").is_array()) << json::serialize(p);
  auto& files = p.at("files").as_array();
  ASSERT_EQ(files.size(), 1u) << json::serialize(p);
  auto f = files[0].as_object();
  EXPECT_EQ(jstr(f, "type"), "image");
  EXPECT_TRUE(is_file_ref(jstr(f, "file_ref"))) << json::serialize(f);
  EXPECT_EQ(jstr(f, "filename"), "a.png");
  EXPECT_EQ(jstr(f, "mime_type"), "image/png");
  EXPECT_EQ(jint(f, "byte_size"), static_cast<std::int64_t>(png.size()));
  EXPECT_GE(jint(f, "expires_at"), before + 604800LL * 1000 - 5000) << json::serialize(f);
  EXPECT_FALSE(f.contains("content_base64")) << "bytes never ride on the data plane";
  for (const auto& frame : dp->received()) EXPECT_EQ(frame.find(base64(png).substr(0, 40)), std::string::npos);
  auto u = parse_url(jstr(f, "download_url"));
  ASSERT_TRUE(u.ok) << jstr(f, "download_url");
  EXPECT_EQ(u.origin, "http://127.0.0.1:" + std::to_string(server.port())) << "download_url is absolute";
  EXPECT_EQ(u.path, refs(jstr(f, "file_ref")));
  EXPECT_TRUE(is_lower_hex(u.sig, 64)) << u.sig;
  auto d = get_without_key(u.target());
  ASSERT_EQ(d.status, 200) << d.body;
  EXPECT_TRUE(d.body == png) << "the downloaded bytes differ";
  EXPECT_EQ(d.headers["content-type"], "image/png");
  dp->send("chat.message.ack", {{"message_id", p.at("message_id")}, {"status", "accepted"}}, channel);
  // The inbound file is bound to its channel too.
  auto other = dp->open_authenticated("tok-other-3");
  EXPECT_EQ(get_with_key(u.ref, {{"X-XAgent-Connector-Channel-ID", other}}).status, 403);
}

TEST_F(Files, a_file_message_may_have_empty_text_and_several_files) {
  auto pdf = random_bytes(1500);
  auto png = png_bytes(900);
  auto r = inject(channel, {{"text", ""},
                            {"files", json::array{json::object{{"filename", "doc.pdf"}, {"mime_type", "application/pdf"},
                                                               {"content_base64", base64(pdf)}},
                                                  json::object{{"filename", "pic.png"}, {"mime_type", "image/png"},
                                                               {"content_base64", base64(png)}}}}});
  ASSERT_EQ(r.status, 202) << r.body;
  auto m = dp->next_push("chat.message", channel);
  ASSERT_TRUE(m);
  auto p = payload_of(*m);
  EXPECT_EQ(text_of(p, "text"), "");
  ASSERT_TRUE(p.contains("files") && p.at("files").is_array());
  auto& files = p.at("files").as_array();
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(jstr(files[0].as_object(), "type"), "file");
  EXPECT_EQ(jstr(files[0].as_object(), "filename"), "doc.pdf");
  EXPECT_EQ(jstr(files[1].as_object(), "type"), "image");
  EXPECT_NE(jstr(files[0].as_object(), "file_ref"), jstr(files[1].as_object(), "file_ref"));
  EXPECT_TRUE(get_without_key(parse_url(jstr(files[0].as_object(), "download_url")).target()).body == pdf);
  EXPECT_TRUE(get_without_key(parse_url(jstr(files[1].as_object(), "download_url")).target()).body == png);
  dp->send("chat.message.ack", {{"message_id", p.at("message_id")}, {"status", "accepted"}}, channel);
}

TEST_F(Files, a_v1_socket_gets_message_push_with_the_same_files_and_a_message_type) {
  auto v1 = dp_client::connect(server.port(), server.key(), "echo", {{"supported_profiles", json::array{"xagent.im.v1"}}});
  ASSERT_TRUE(v1);
  auto ch = v1->open_authenticated();
  ASSERT_FALSE(ch.empty());
  auto png = png_bytes(1200);
  auto pdf = random_bytes(800);
  auto png_item = json::object{{"filename", "a.png"}, {"mime_type", "image/png"}, {"content_base64", base64(png)}};
  auto pdf_item = json::object{{"filename", "b.pdf"}, {"mime_type", "application/pdf"}, {"content_base64", base64(pdf)}};

  ASSERT_EQ(inject(ch, {{"text", "an image"}, {"files", json::array{png_item}}}).status, 202);
  auto m = v1->next_push("message.push", ch);
  ASSERT_TRUE(m);
  auto p = payload_of(*m);
  EXPECT_EQ(text_of(p, "message_type"), "image") << json::serialize(p);
  ASSERT_TRUE(p.contains("files") && p.at("files").is_array()) << json::serialize(p);
  ASSERT_EQ(p.at("files").as_array().size(), 1u);
  auto f = p.at("files").as_array()[0].as_object();
  EXPECT_EQ(jstr(f, "type"), "image");
  EXPECT_TRUE(is_file_ref(jstr(f, "file_ref")));
  EXPECT_EQ(jstr(f, "filename"), "a.png");
  EXPECT_EQ(jstr(f, "mime_type"), "image/png");
  EXPECT_EQ(jint(f, "byte_size"), static_cast<std::int64_t>(png.size()));
  EXPECT_GT(jint(f, "expires_at"), now_ms());
  auto u = parse_url(jstr(f, "download_url"));
  ASSERT_TRUE(u.ok) << jstr(f, "download_url");
  EXPECT_TRUE(get_without_key(u.target()).body == png);

  ASSERT_EQ(inject(ch, {{"text", "a document first"}, {"files", json::array{pdf_item, png_item}}}).status, 202);
  m = v1->next_push("message.push", ch);
  ASSERT_TRUE(m);
  p = payload_of(*m);
  EXPECT_EQ(text_of(p, "message_type"), "file") << json::serialize(p);
  ASSERT_TRUE(p.contains("files") && p.at("files").is_array());
  EXPECT_EQ(p.at("files").as_array().size(), 2u);

  ASSERT_EQ(inject(ch, {{"text", "no files"}}).status, 202);
  m = v1->next_push("message.push", ch);
  ASSERT_TRUE(m);
  EXPECT_EQ(text_of(payload_of(*m), "message_type"), "text");
  EXPECT_EQ(text_of(payload_of(*m), "text"), "no files");
  EXPECT_EQ(payload_of(*m)["skill"], (json::object{{"name", "connector-im-echo"}, {"tool_ids", json::array{}}}));
  EXPECT_FALSE(payload_of(*m).contains("reply"));  // echo has no IM v1 tool that replies

  // Files and no text: the text still describes the message completely (IM v1 §5, §6).
  ASSERT_EQ(inject(ch, {{"text", ""}, {"files", json::array{pdf_item}}}).status, 202);
  m = v1->next_push("message.push", ch);
  ASSERT_TRUE(m);
  p = payload_of(*m);
  EXPECT_EQ(text_of(p, "raw_text"), "");
  EXPECT_EQ(text_of(p, "text"), "User message from Echo:\nSender: " + text_of(p, "display_name") +
                                    "\nConversation type: " + text_of(p, "chat_type") +
                                    "\nMessage type: file\nUser text: none\nFile: b.pdf")
      << json::serialize(p);
}

TEST_F(Files, a_final_naming_an_upload_of_its_channel_is_accepted_and_sent_with_it) {
  auto ref = upload_ref("outbound attachment");
  auto sent = dp->send("chat.message",
                       {{"message_id", "out-files-1"}, {"text", "here you go"},
                        {"files", json::array{json::object{{"type", "file"}, {"file_ref", ref}}}}},
                       channel);
  auto ack = dp->answer(sent);
  ASSERT_TRUE(ack);
  EXPECT_EQ(text_of(*ack, "type"), "chat.message.ack") << json::serialize(*ack);
  EXPECT_EQ(text_of(payload_of(*ack), "status"), "accepted") << json::serialize(*ack);
  EXPECT_EQ(text_of(payload_of(*ack), "message_id"), "out-files-1");

  auto r = http_get(server.port(), echo_base + "/sent", server.key());
  ASSERT_EQ(r.status, 200) << r.body;
  bool found = false;
  auto sent_log = r.json();
  ASSERT_TRUE(sent_log.is_object() && sent_log.as_object().contains("sent") && sent_log.at("sent").is_array()) << r.body;
  for (const auto& e : sent_log.at("sent").as_array()) {
    if (text_of(e.as_object(), "message_id") != "out-files-1") continue;
    found = true;
    EXPECT_EQ(text_of(e.as_object(), "text"), "here you go");
    auto* files = e.as_object().if_contains("files");
    ASSERT_TRUE(files && files->is_array()) << json::serialize(e);
    bool has_ref = std::any_of(files->as_array().begin(), files->as_array().end(), [&](const json::value& v) {
      return (v.is_string() && v.as_string() == ref) || (v.is_object() && text_of(v.as_object(), "file_ref") == ref);
    });
    EXPECT_TRUE(has_ref) << json::serialize(e);
  }
  EXPECT_TRUE(found) << r.body;
  // A file-only final (no text) is a message as well.
  auto ref2 = upload_ref("second attachment");
  sent = dp->send("chat.message", {{"message_id", "out-files-2"}, {"files", json::array{json::object{{"type", "file"}, {"file_ref", ref2}}}}},
                  channel);
  ack = dp->answer(sent);
  ASSERT_TRUE(ack);
  EXPECT_EQ(text_of(payload_of(*ack), "status"), "accepted") << json::serialize(*ack);
}

TEST_F(Files, a_final_naming_another_channels_upload_or_an_unknown_ref_is_rejected) {
  auto other = dp->open_authenticated("tok-other-4");
  ASSERT_FALSE(other.empty());
  auto foreign = upload_ref("belongs to the other channel", other);
  ASSERT_FALSE(foreign.empty());
  auto expect_rejected = [&](const std::string& message_id, const std::string& ref) {
    auto sent = dp->send("chat.message",
                         {{"message_id", message_id}, {"text", "x"}, {"files", json::array{json::object{{"type", "file"}, {"file_ref", ref}}}}},
                         channel);
    auto ack = dp->answer(sent);
    ASSERT_TRUE(ack) << message_id;
    auto p = payload_of(*ack);
    EXPECT_EQ(text_of(*ack, "type"), "chat.message.ack") << json::serialize(*ack);
    EXPECT_EQ(text_of(p, "status"), "rejected") << json::serialize(*ack);
    EXPECT_EQ(text_of(p, "code"), "file_ref_not_found") << json::serialize(*ack);
    EXPECT_EQ(p.if_contains("retryable") ? p.at("retryable") : json::value(), json::value(false)) << json::serialize(*ack);
  };
  expect_rejected("out-foreign", foreign);
  expect_rejected("out-unknown", "file_" + std::string(32, '0'));
  expect_rejected("out-garbage", "../../etc/passwd");
  auto r = http_get(server.port(), echo_base + "/sent", server.key());
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.body.find("out-foreign"), std::string::npos) << r.body;
  EXPECT_EQ(r.body.find("out-unknown"), std::string::npos) << r.body;
  // The same file is fine on its own channel.
  auto sent = dp->send("chat.message",
                       {{"message_id", "out-own"}, {"text", "x"}, {"files", json::array{json::object{{"type", "file"}, {"file_ref", foreign}}}}},
                       other);
  auto ack = dp->answer(sent);
  ASSERT_TRUE(ack);
  EXPECT_EQ(text_of(payload_of(*ack), "status"), "accepted") << json::serialize(*ack);
}

}  // namespace
}  // namespace xconn::test

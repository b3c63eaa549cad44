// echo's /inject deletes the files it stored when no message names them (ABI 1.5 xconn_host_file_delete): every
// ref of an emit the host answered as a duplicate, and those kept before a later attachment's keep failed. A new
// message's files are never deleted, and on a host without the call echo still answers as before.
#include "support/abi_test_host.hpp"
#include "support/test_support.hpp"

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <cstddef>
#include <set>
#include <string>
#include <vector>

namespace {

namespace json = boost::json;
using xconn::test::accepted;
using xconn::test::test_call;
using xconn::test::test_host;

constexpr const char* two_files = R"({"connector_channel_id":"ch-1","text":"see","msg_id":"m-1",
    "files":[{"filename":"a.txt","content_base64":"aGk="},{"filename":"b.bin","content_base64":"AAEC/w=="}]})";

class EchoInjectFileDelete : public xconn::test::plugin_test {
 protected:
  void start() {
    load(xconn::test::plugin_dir() / "echo.so", "{}");
    if (HasFatalFailure()) return;
    test_call& call = start_call();
    ASSERT_TRUE(host_.wait(call));
    ASSERT_EQ(call.status, XCONN_STATUS_OK) << call.json;
  }

  // The route's answer: {"status", "body"} with the body parsed.
  std::pair<std::int64_t, json::object> inject(std::string_view body) {
    test_call& call = host_.new_call();
    api_->xconn_plugin_on_http(instance_, call.c_call(), xconn::test::c_str("POST"), xconn::test::c_str("/inject"),
                               xconn::test::c_str(""), xconn::test::c_str(body));
    EXPECT_TRUE(host_.wait(call)) << "/inject never answered";
    if (call.status != XCONN_STATUS_OK || call.completions == 0) return {0, {}};
    auto answer = call.result();
    return {answer.at("status").as_int64(), json::parse(answer.at("body").as_string()).as_object()};
  }

  // The refs the last emit named.
  std::set<std::string> emitted_refs() {
    std::set<std::string> refs;
    auto emits = host_.emits();
    if (emits.empty() || !emits.back().message.contains("files")) return refs;
    for (const auto& f : emits.back().message.at("files").as_array()) refs.emplace(f.at("file_ref").as_string());
    return refs;
  }
};

TEST_F(EchoInjectFileDelete, ADuplicatesFilesAreDeletedBeforeThe202) {
  start();
  host_.set_policy([](std::size_t i) { return i == 0 ? accepted("msg_1") : accepted("msg_1", true); });
  auto first = inject(two_files);
  ASSERT_EQ(first.first, 202);
  EXPECT_EQ(first.second.at("duplicate"), false);
  const auto first_refs = emitted_refs();
  ASSERT_EQ(first_refs.size(), 2u);
  EXPECT_TRUE(host_.file_deletes().empty()) << "a new message's files are its own";

  auto again = inject(two_files);
  EXPECT_EQ(again.first, 202);
  EXPECT_EQ(again.second, json::parse(R"({"status":"accepted","message_id":"msg_1","duplicate":true})"));
  const auto second_refs = emitted_refs();
  ASSERT_EQ(second_refs.size(), 2u);
  auto deletes = host_.file_deletes();
  ASSERT_EQ(deletes.size(), 2u);
  std::set<std::string> deleted;
  for (const auto& d : deletes) {
    EXPECT_EQ(d.channel, "ch-1");
    EXPECT_EQ(d.answer, 0) << d.file_ref;
    deleted.insert(d.file_ref);
  }
  EXPECT_EQ(deleted, second_refs) << "exactly the duplicate's refs";
  std::set<std::string> left;
  for (const auto& [ref, file] : host_.files()) left.insert(ref);
  EXPECT_EQ(left, first_refs) << "the first message's files stay";
}

TEST_F(EchoInjectFileDelete, AKeepThatFailsDeletesTheFilesKeptBeforeIt) {
  start();
  host_.fail_keep(3);  // the third of three: two were kept by then
  auto r = inject(R"({"connector_channel_id":"ch-1","text":"three","files":[
      {"filename":"a","content_base64":"YQ=="},{"filename":"b","content_base64":"Yg=="},
      {"filename":"c","content_base64":"Yw=="}]})");
  EXPECT_EQ(r.first, 400);
  EXPECT_EQ(r.second.at("error").at("code"), "store_failed");
  EXPECT_TRUE(host_.emits().empty());
  EXPECT_TRUE(host_.files().empty()) << "a kept file stayed, named by no message";
  auto deletes = host_.file_deletes();
  ASSERT_EQ(deletes.size(), 2u);
  for (const auto& d : deletes) EXPECT_EQ(d.answer, 0) << d.file_ref;
}

TEST_F(EchoInjectFileDelete, AFirstKeepThatFailsDeletesNothing) {
  start();
  host_.fail_keep(1);
  auto r = inject(two_files);
  EXPECT_EQ(r.first, 400);
  EXPECT_TRUE(host_.file_deletes().empty());
  EXPECT_TRUE(host_.files().empty());
}

// A 1.5 host without the delete (its table ends before it): the duplicate is answered as before, nothing is called.
TEST_F(EchoInjectFileDelete, AnOlderHostKeepsTheDuplicatesFilesAndStillAnswers) {
  host_.end_table_at(offsetof(xconn_host_api, xconn_host_file_delete));
  start();
  host_.set_policy([](std::size_t) { return accepted("msg_1", true); });
  auto r = inject(two_files);
  EXPECT_EQ(r.first, 202);
  EXPECT_EQ(r.second.at("duplicate"), true);
  EXPECT_TRUE(host_.file_deletes().empty());
  EXPECT_EQ(host_.files().size(), 2u);
}

}  // namespace

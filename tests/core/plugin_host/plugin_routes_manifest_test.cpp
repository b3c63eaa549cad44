// http_routes in a manifest: what a route path may be (segments, one trailing {param}), the host's own endpoints,
// duplicates, and how find_route matches a path (an exact route first, a parameter of one plain segment).
#include "core/plugin_host/plugin_manifest.hpp"

#include "support/sample_manifest.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace xconn {
namespace {
namespace json = boost::json;

boost::system::result<plugin_manifest, std::string> with_routes(json::array routes) {
  auto m = test::sample_manifest();
  m["http_routes"] = std::move(routes);
  return parse_manifest(json::serialize(m), test::sample_build_json);
}

json::object route(std::string path, std::string method = "POST") {
  return json::object{{"path", std::move(path)}, {"method", std::move(method)}};
}

TEST(ManifestRoutes, AParameterMayEndAPathOfPlainSegments) {
  EXPECT_TRUE(with_routes({route("/in/{id}"), route("/in/all"), route("/a/b/{channel_id}", "GET")}));
  for (const char* bad : {"/{id}", "/in/{id}/more", "/in/{ID}", "/in/{}", "/in/{id", "/in/x{id}", "/in/{a}/{b}",
                          "in/{id}", "/in//x", "/In"}) {
    auto r = with_routes({route(bad)});
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error(), "http_routes[0].path: /segments of a-z 0-9 _ -, the last one may be a {param}") << bad;
  }
  EXPECT_EQ(with_routes({route("/in/{id}"), route("/in/{id}")}).error(), "http_routes[1]: declared twice");
  EXPECT_TRUE(with_routes({route("/in/{id}"), route("/in/{id}", "GET")}));
  EXPECT_EQ(with_routes({route("/health/{x}")}).error(), "http_routes[0].path: /health belongs to the host");
}

TEST(ManifestRoutes, FindRouteTriesTheExactRouteFirstAndTakesOnePlainSegment) {
  auto m = with_routes({route("/in/{id}"), route("/in/all")});
  ASSERT_TRUE(m) << m.error();
  std::string param = "untouched";
  EXPECT_EQ(m->find_route("POST", "/in/all", &param)->path, "/in/all");
  EXPECT_EQ(param, "untouched");
  EXPECT_EQ(m->find_route("POST", "/in/cch_Ab-1.x~", &param)->path, "/in/{id}");
  EXPECT_EQ(param, "cch_Ab-1.x~");
  const std::vector<std::string> strangers{"/in/", "/in/a/b", "/in/a%2Fb", "/in/" + std::string(129, 'a'),
                                           "/in",  "/in/{id}", "/out/a"};
  for (const auto& path : strangers)
    EXPECT_EQ(m->find_route("POST", path), nullptr) << path;
  EXPECT_EQ(m->find_route("GET", "/in/x"), nullptr);
  EXPECT_TRUE(m->has_route_path("/in/x"));
  EXPECT_FALSE(m->has_route_path("/in/{id}"));
}

}  // namespace
}  // namespace xconn

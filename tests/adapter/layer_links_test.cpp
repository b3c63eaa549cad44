// The adapter library links into a program that compiles Boost.JSON once, as a plugin does.
#include <gtest/gtest.h>

namespace xconn::adapter {
extern int layer_anchor;
}

TEST(adapter_layer, links) { EXPECT_EQ(xconn::adapter::layer_anchor, 0); }

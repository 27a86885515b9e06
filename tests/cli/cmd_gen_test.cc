// gen's layer filter: layer numbers of any length, never std::stoll's out_of_range.
#include "cli/cmd_gen.h"

#include <gtest/gtest.h>

namespace loadplan::cli {
namespace {

TEST(GenLayers, FiltersByLayerNumber) {
  EXPECT_FALSE(BeyondLayers("model.layers.1.mlp.w", 2));
  EXPECT_TRUE(BeyondLayers("model.layers.2.mlp.w", 2));
  EXPECT_TRUE(BeyondLayers("layers.7.w", 2));
  EXPECT_FALSE(BeyondLayers("model.embed.weight", 0));
  EXPECT_FALSE(BeyondLayers("model.xlayers.9.w", 2));  // not a "layers." component
}

TEST(GenLayers, HugeLayerNumbersAreBeyond) {
  EXPECT_NO_THROW(EXPECT_TRUE(BeyondLayers("model.layers.99999999999999999999.w", 4096)));
  EXPECT_TRUE(BeyondLayers("layers." + std::string(400, '9') + ".w", 1));
}

}  // namespace
}  // namespace loadplan::cli

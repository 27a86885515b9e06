// BindAssignment: `--at VAR=N` texts against the manifest's variables and their ranges.
#include "verifier/bind_assignment.h"

#include <gtest/gtest.h>

namespace loadplan::verifier {
namespace {

Manifest TwoVars() {
  Manifest m;
  m.vars = {{.name = "batch", .min = 1, .max = 256}, {.name = "ctx", .min = 0, .max = 131072}};
  return m;
}

base::Status ErrorOf(const std::vector<std::string>& texts) {
  return BindAssignment(TwoVars(), texts).status();
}

TEST(ParseBinding, SplitsNameAndValue) {
  const auto b = ParseBinding("batch=-4");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->first, "batch");
  EXPECT_EQ(b->second, -4);
  EXPECT_EQ(ParseBinding("batch").status().message(), "expected VAR=VALUE");
  EXPECT_EQ(ParseBinding("=4").status().message(), "expected VAR=VALUE");
  EXPECT_EQ(ParseBinding("batch=").status().message(), "VALUE must be an integer");
  EXPECT_EQ(ParseBinding("batch=4x").status().message(), "VALUE must be an integer");
  EXPECT_EQ(ParseBinding("batch=99999999999999999999").status().message(),
            "VALUE must be an integer");
}

TEST(BindAssignment, BindsDeclaredVariablesInRange) {
  const base::Result<Assignment> at =
      BindAssignment(TwoVars(), std::vector<std::string>{"batch=256", "ctx=0"});
  ASSERT_TRUE(at.ok()) << at.status().message();
  EXPECT_EQ(*at, (Assignment{{"batch", 256}, {"ctx", 0}}));
  const base::Result<Assignment> none = BindAssignment(TwoVars(), std::vector<std::string>{});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(BindAssignment, NamesTheTextAndTheReason) {
  EXPECT_EQ(ErrorOf({"batch"}).message(), "batch: expected VAR=VALUE");
  EXPECT_EQ(ErrorOf({"batch=x"}).message(), "batch=x: VALUE must be an integer");
  EXPECT_EQ(ErrorOf({"bogus=1"}).message(), "bogus=1: no variable `bogus` in the manifest");
  EXPECT_EQ(ErrorOf({"batch=0"}).message(), "batch=0: outside [1, 256]");
  EXPECT_EQ(ErrorOf({"batch=257"}).message(), "batch=257: outside [1, 256]");
  EXPECT_EQ(ErrorOf({"batch=2", "ctx=5", "batch=3"}).message(),
            "batch=3: `batch` is already bound (--at batch=2)");
  EXPECT_EQ(ErrorOf({"batch=0"}).kind(), base::ErrorKind::kInvalidInput);
}

}  // namespace
}  // namespace loadplan::verifier

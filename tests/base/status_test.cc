// base::StatusFromLines / StatusLines: all-at-once checks report one status, one problem a line.
#include "base/status_lines.h"

#include <gtest/gtest.h>

namespace loadplan::base {
namespace {

TEST(StatusLines, NoProblemsIsOk) {
  EXPECT_TRUE(StatusFromLines({}).ok());
  EXPECT_TRUE(StatusLines(Status::Ok()).empty());
}

TEST(StatusLines, ProblemsRoundTripInOrder) {
  const std::vector<std::string> problems = {"b: dtype", "c: missing", "d: shape"};
  const Status st = StatusFromLines(problems, ErrorKind::kIo);
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.kind(), ErrorKind::kIo);
  EXPECT_EQ(st.message(), "b: dtype\nc: missing\nd: shape");
  EXPECT_EQ(StatusLines(st), problems);
  EXPECT_EQ(StatusFromLines({"one"}).kind(), ErrorKind::kInvalidInput);
  EXPECT_EQ(StatusLines(Status::Error("x")), std::vector<std::string>{"x"});
}

}  // namespace
}  // namespace loadplan::base

// base::Status's typed fields (bytes, file) through rewording; base::StatusFromLines / StatusLines:
// all-at-once checks report one status, one problem a line.
#include "base/status_lines.h"

#include <cerrno>

#include "base/input_file.h"

#include <gtest/gtest.h>

namespace loadplan::base {
namespace {

TEST(Status, BytesSurviveRewordingAndContext) {
  const Status oom =
      Status::Error("pool of 2 GiB failed", ErrorKind::kOutOfMemory).WithBytes(2u << 30, 1u << 20);
  ASSERT_TRUE(oom.bytes().has_value());
  EXPECT_EQ(oom.bytes()->requested, 2u << 30);
  EXPECT_EQ(oom.bytes()->free, 1u << 20);
  const Status worded = oom.WithContext("load").WithMessage("step 3: " + oom.message());
  EXPECT_EQ(worded.message(), "step 3: pool of 2 GiB failed");
  EXPECT_EQ(worded.kind(), ErrorKind::kOutOfMemory);
  EXPECT_EQ(worded.bytes(), oom.bytes());
  EXPECT_FALSE(Status::Error("x").bytes().has_value());
  EXPECT_TRUE(Status::Ok().WithBytes(1, 2).ok());  // ok stays ok
  EXPECT_FALSE(Status::Ok().WithBytes(1, 2).bytes().has_value());
}

// The file an input error is about travels with it (Python's FileNotFoundError reads errno):
// set by base::ReadInputFile, kept by rewording and context.
TEST(Status, FileAndErrnoSurviveRewordingAndContext) {
  const Status missing =
      ReadInputFile("/nonexistent/loadplan/m.json", 1 << 20, "manifest").status();
  ASSERT_TRUE(missing.file().has_value());
  EXPECT_EQ(missing.file()->path, "/nonexistent/loadplan/m.json");
  EXPECT_EQ(missing.file()->error_number, ENOENT);
  EXPECT_EQ(missing.kind(), ErrorKind::kIo);
  EXPECT_EQ(missing.WithContext("check").WithMessage("x").file(), missing.file());
  const Status dir = ReadInputFile("/", 1 << 20, "manifest").status();  // loadplan's refusal
  ASSERT_TRUE(dir.file().has_value());
  EXPECT_EQ(dir.file()->error_number, 0);
  EXPECT_FALSE(Status::Error("x").file().has_value());
  EXPECT_TRUE(Status::Ok().WithFile("p", 2).ok());
}

// An all-at-once check's problems travel as a list: kept through rewording and context, given
// back as made (not split from the reworded message).
TEST(StatusLines, ProblemsAreAListThatSurvivesRewording) {
  const Status st = StatusFromLines({"tensor a is missing", "tensor b has 3 bytes, not 4"});
  EXPECT_EQ(st.problems(),
            (std::vector<std::string>{"tensor a is missing", "tensor b has 3 bytes, not 4"}));
  const Status worded = st.WithContext("preflight").WithMessage("load: " + st.message());
  EXPECT_EQ(StatusLines(worded), st.problems());
  EXPECT_EQ(StatusLines(Status::Error("one\ntwo")), (std::vector<std::string>{"one", "two"}));
  EXPECT_TRUE(Status::Ok().WithProblems({"x"}).problems().empty());
}

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

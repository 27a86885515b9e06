// cli/pipeline: load -> check -> diagnostics -> exit code, plan -> self-check, WriteOutput.
#include "cli/pipeline.h"
#include "verifier/manifest_file.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace loadplan::cli {
namespace {

namespace fs = std::filesystem;
using testing::internal::CaptureStderr;
using testing::internal::CaptureStdout;
using testing::internal::GetCapturedStderr;
using testing::internal::GetCapturedStdout;

fs::path TempFile(const std::string& stem, const std::string& text) {
  const fs::path p =
      fs::temp_directory_path() / (stem + "_" + std::to_string(::getpid()) + ".json");
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A manifest that parses but does not verify: a shape names an undeclared variable.
const char* kBadManifest = R"({"schema":1,"name":"m","vars":{},"kernels":{},"programs":{},
  "buffers":{"a":{"kind":"weight","tensor":"t","dtype":"BF16","shape":["nope"]}}})";

TEST(Pipeline, EmbeddedExampleVerifiesAndPlans) {
  CaptureStderr();
  Outcome<PlannedInput> in = LoadAndPlan("", {}, {.command = "test"});
  EXPECT_EQ(GetCapturedStderr(), "");  // clean: nothing printed unless warnings_when_clean
  ASSERT_TRUE(in.ok());
  EXPECT_EQ(in.exit_code(), 0);
  EXPECT_EQ(in->input.display_name, kDefaultExampleName);
  EXPECT_FALSE(in->plan.calls.empty());
  EXPECT_EQ(in->plan, simulator::Plan(*in->input.check.result.verified, {}));
}

TEST(Pipeline, UnreadableFileIsExit2WithTheCommandsName) {
  CaptureStderr();
  const Outcome<CheckedInput> in = LoadVerified("/nonexistent/x.json", {.command = "loadplan gen"});
  const std::string err = GetCapturedStderr();
  EXPECT_FALSE(in.ok());
  EXPECT_EQ(in.exit_code(), 2);
  EXPECT_EQ(err.rfind("loadplan gen: cannot open /nonexistent/x.json: ", 0), 0u) << err;
  // Rendering commands name the input instead.
  CaptureStderr();
  const Outcome<CheckedInput> again =
      LoadVerified("/nonexistent/x.json", Reporting::ForRendering());
  EXPECT_EQ(GetCapturedStderr().rfind("/nonexistent/x.json: cannot open /nonexistent/x.json: ", 0),
            0u);
  EXPECT_EQ(again.exit_code(), 2);
}

TEST(Pipeline, NotJsonIsExit2AndErrorsExit1) {
  const fs::path not_json = TempFile("lp_pipe_notjson", "{");
  CaptureStderr();
  EXPECT_EQ(LoadVerified(not_json.string(), {.command = "c"}).exit_code(), 2);
  EXPECT_NE(GetCapturedStderr(), "");
  const fs::path bad = TempFile("lp_pipe_bad", kBadManifest);
  CaptureStderr();
  EXPECT_EQ(LoadVerified(bad.string(), {.command = "c"}).exit_code(), 1);
  const std::string plain = GetCapturedStderr();
  EXPECT_NE(plain.find("error"), std::string::npos) << plain;
  EXPECT_EQ(plain.find("not planned"), std::string::npos);
  CaptureStderr();
  EXPECT_EQ(LoadVerified(bad.string(), Reporting::ForRendering()).exit_code(), 1);
  const std::string rendering = GetCapturedStderr();
  EXPECT_NE(rendering.find(bad.string() + ": not planned: the manifest has verification errors\n"),
            std::string::npos);
  fs::remove(not_json);
  fs::remove(bad);
}

TEST(Pipeline, JsonFormatPrintsDiagnosticsOnStdout) {
  const fs::path bad = TempFile("lp_pipe_badjson", kBadManifest);
  CaptureStdout();
  CaptureStderr();
  EXPECT_EQ(LoadVerified(bad.string(), {.command = "c", .format = Format::kJson}).exit_code(), 1);
  EXPECT_EQ(GetCapturedStderr(), "");
  const std::string out = GetCapturedStdout();
  EXPECT_EQ(out.front(), '[') << out;
  EXPECT_NE(out.find("\"code\""), std::string::npos);
  CaptureStdout();
  EXPECT_EQ(LoadVerified("/nonexistent/y.json", {.format = Format::kJson}).exit_code(), 2);
  EXPECT_NE(GetCapturedStdout().find("\"J3\""), std::string::npos);  // the unreadable file's J3
  fs::remove(bad);
}

TEST(ReadFileLimited, ResultCarriesTheReason) {
  const fs::path p = TempFile("lp_pipe_read", "12345");
  const base::Result<std::string> ok = verifier::ReadManifestFile(p.string(), 5);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, "12345");
  const base::Result<std::string> big = verifier::ReadManifestFile(p.string(), 4);
  EXPECT_EQ(big.status().kind(), base::ErrorKind::kIo);
  EXPECT_EQ(big.status().message(), p.string() + " is 5 bytes, over the 4 byte manifest limit");
  EXPECT_FALSE(
      verifier::ReadManifestFile(fs::temp_directory_path().string(), 100).ok());  // a directory
  fs::remove(p);
}

TEST(WriteOutput, WritesFilesAndSaysWhyNot) {
  const fs::path p = fs::temp_directory_path() / ("lp_pipe_out_" + std::to_string(::getpid()));
  ASSERT_TRUE(WriteOutput(p.string(), "abc").ok());
  ASSERT_TRUE(WriteOutput(p.string(), "de").ok());  // truncates
  EXPECT_EQ(ReadAll(p), "de");
  const base::Status fail = WriteOutput("/nonexistent/dir/out.svg", "x");
  EXPECT_FALSE(fail.ok());
  EXPECT_EQ(fail.message(), "cannot write /nonexistent/dir/out.svg");
  CaptureStdout();
  EXPECT_TRUE(WriteOutput("-", "to stdout").ok());
  EXPECT_EQ(GetCapturedStdout(), "to stdout");
  fs::remove(p);
}

TEST(Extension, LowerCaseWithoutTheDot) {
  EXPECT_EQ(Extension("a/b.SVG"), "svg");
  EXPECT_EQ(Extension("out.tar.gz"), "gz");
  EXPECT_EQ(Extension("noext"), "");
  EXPECT_EQ(Extension("-"), "");
}

TEST(Outcome, HoldsAValueOrAnExitCode) {
  const Outcome<int> value = 7;
  EXPECT_TRUE(value.ok());
  EXPECT_EQ(*value, 7);
  EXPECT_EQ(value.exit_code(), 0);
  const Outcome<int> exit = Outcome<int>::Exit(4);
  EXPECT_FALSE(exit.ok());
  EXPECT_EQ(exit.exit_code(), 4);
}

}  // namespace
}  // namespace loadplan::cli

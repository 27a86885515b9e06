// `run --format json` with paths that are not UTF-8: replaced, never nlohmann's type_error.316.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cmd_run_internal.h"

namespace loadplan::cli::run {
namespace {

TEST(RunReport, JsonOfNonUtf8PathsPrints) {
  Report r{.manifest = "m\xff.json", .checkpoint = "ckpt\xc3(/", .mode = "staged"};
  r.runs.push_back(Measurement{});
  r.saved = "out\xfe/derived.safetensors";
  ::testing::internal::CaptureStdout();
  EXPECT_NO_THROW(PrintJson(r));
  const std::string out = ::testing::internal::GetCapturedStdout();
  const nlohmann::json j = nlohmann::json::parse(out);
  EXPECT_NE(j.at("checkpoint").get<std::string>().find("\xef\xbf\xbd"),
            std::string::npos);  // U+FFFD
  EXPECT_EQ(j.at("mode"), "staged");
}

}  // namespace
}  // namespace loadplan::cli::run

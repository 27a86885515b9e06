// `run --format json` with paths that are not UTF-8: replaced, never nlohmann's type_error.316.
// The ceilings, in JSON and text: each probe's figure, its error, or null / a note when the
// both-at-once probe had too few rounds; a probe that did not run is absent.
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

Report WithCeilings() {
  Report r{.manifest = "m.json", .checkpoint = "ckpt", .mode = "staged", .io_threads = 12};
  r.runs.push_back(Measurement{});
  r.h2d = backend::Throughput{.bytes = 55'000'000'000, .seconds = 1};
  r.host_read = base::Status::Error("short pread at 4096", base::ErrorKind::kIo);
  r.shared = backend::SharedCeilings{.read = {.bytes = 30'000'000'000, .seconds = 1}};
  return r;  // host_copy: not run
}

TEST(RunReport, CeilingsInJsonAreFiguresErrorsOrNull) {
  ::testing::internal::CaptureStdout();
  PrintJson(WithCeilings());
  const nlohmann::json c =
      nlohmann::json::parse(::testing::internal::GetCapturedStdout()).at("ceilings");
  EXPECT_DOUBLE_EQ(c.at("pinned_h2d_gbps").get<double>(), 55.0);
  EXPECT_EQ(c.at("host_read_gbps"), "short pread at 4096");
  EXPECT_TRUE(c.at("pinned_h2d_beside_read_gbps").is_null());
  EXPECT_DOUBLE_EQ(c.at("host_read_beside_h2d_gbps").get<double>(), 30.0);
  EXPECT_FALSE(c.contains("host_copy_gbps"));
}

TEST(RunReport, CeilingsInTextSayWhatFailedAndWhatWasTooShort) {
  ::testing::internal::CaptureStdout();
  PrintText(WithCeilings());
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("  ceilings    pinned H2D 55.00 GB/s (1 GiB, 4 streams)"), std::string::npos)
      << out;
  EXPECT_NE(out.find("              host read probe failed: short pread at 4096"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("both at once: the reads were too short for 3 copy rounds"), std::string::npos)
      << out;
  EXPECT_EQ(out.find("host memory copy"), std::string::npos) << out;
}

}  // namespace
}  // namespace loadplan::cli::run

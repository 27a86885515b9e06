// Machine profiles: JSON round trip, and every bad input named by its JSON pointer.
#include "simulator/timing/profile.h"

#include <string>

#include <gtest/gtest.h>

namespace loadplan::simulator::timing {
namespace {

std::string Text(const MachineProfile& p) { return ProfileJson(p).dump(); }

// The error message of parsing `p` after `edit` changed its JSON.
template <class Edit>
std::string ErrorAfter(Edit edit) {
  nlohmann::json j = ProfileJson(DefaultH200Profile());
  edit(j);
  base::Result<MachineProfile> r = ParseProfile(j.dump());
  EXPECT_FALSE(r.ok()) << j.dump();
  return r.ok() ? "" : r.status().message();
}

TEST(Profile, RoundTrips) {
  MachineProfile p = DefaultH200Profile();
  p.kernels["copy"] = 1.5e12;
  p.context_device_bytes = 123456789;
  base::Result<MachineProfile> back = ParseProfile(Text(p));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, p);
}

// A slice run's calibrated cost: written when measured, read back, absent from an older
// profile (then the default); a bad value named by its pointer.
TEST(Profile, PerRunCostIsOptionalAndRoundTrips) {
  MachineProfile p = DefaultH200Profile();
  EXPECT_FALSE(ProfileJson(p)["rates"].contains("per_run_s"));
  EXPECT_EQ(PerRunSeconds(p), kDefaultPerRunSeconds);
  p.per_run_s = 1.7e-6;
  base::Result<MachineProfile> back = ParseProfile(Text(p));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->per_run_s, 1.7e-6);
  EXPECT_EQ(PerRunSeconds(*back), 1.7e-6);
  EXPECT_EQ(ErrorAfter([](nlohmann::json& j) { j["rates"]["per_run_s"] = -1; }),
            "/rates/per_run_s: expected a number > 0");
}

// The map's per-page cost: optional like per_run_s (absent: the default).
TEST(Profile, PerPageCostIsOptionalAndRoundTrips) {
  MachineProfile p = DefaultH200Profile();
  EXPECT_FALSE(ProfileJson(p)["rates"].contains("per_page_s"));
  EXPECT_EQ(SliceCostsOf(p).per_page_s, kDefaultPerPageSeconds);
  EXPECT_EQ(SliceCostsOf(p, /*direct_io=*/true).per_page_s, 0);  // O_DIRECT maps nothing
  p.per_page_s = 8e-8;
  base::Result<MachineProfile> back = ParseProfile(Text(p));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->per_page_s, 8e-8);
  EXPECT_EQ(SliceCostsOf(*back).per_page_s, 8e-8);
  EXPECT_EQ(SliceCostsOf(*back).threads, back->io_threads);
  EXPECT_EQ(ErrorAfter([](nlohmann::json& j) { j["rates"]["per_page_s"] = 0; }),
            "/rates/per_page_s: expected a number > 0");
}

// rates.per_map_run_s, the map's cost per run copied, is optional the same way.
TEST(Profile, APerMapRunCostIsOptionalAndRoundTrips) {
  MachineProfile p = DefaultH200Profile();
  p.per_map_run_s = 0;
  EXPECT_FALSE(ProfileJson(p)["rates"].contains("per_map_run_s"));
  EXPECT_EQ(SliceCostsOf(p).per_map_run_s, kDefaultPerMapRunSeconds);
  EXPECT_EQ(kDefaultPerMapRunSeconds, 0);  // absent: not weighed, the prediction as before
  p.per_map_run_s = 3e-8;
  base::Result<MachineProfile> back = ParseProfile(Text(p));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->per_map_run_s, 3e-8);
  EXPECT_EQ(SliceCostsOf(*back).per_map_run_s, 3e-8);
  EXPECT_EQ(ErrorAfter([](nlohmann::json& j) { j["rates"]["per_map_run_s"] = -1; }),
            "/rates/per_map_run_s: expected a number > 0");
}

TEST(Profile, MissingRateNamesItsPointer) {
  EXPECT_EQ(ErrorAfter([](nlohmann::json& j) { j["rates"].erase("pinned_h2d"); }),
            "/rates/pinned_h2d: missing");
}

TEST(Profile, NonPositiveRateIsRefused) {
  EXPECT_EQ(ErrorAfter([](nlohmann::json& j) { j["rates"]["pipeline_cold"] = 0; }),
            "/rates/pipeline_cold: expected a number > 0");
  EXPECT_EQ(ErrorAfter([](nlohmann::json& j) { j["kernels"]["rates"]["copy"] = "fast"; }),
            "/kernels/rates/copy: expected a number > 0");
  EXPECT_EQ(ErrorAfter([](nlohmann::json& j) { j["io"]["threads"] = 0; }),
            "/io/threads: expected an integer > 0");
  EXPECT_EQ(ErrorAfter([](nlohmann::json& j) { j["io"]["threads"] = 5000; }),
            "/io/threads: 5000 threads, more than 4096");
}

TEST(Profile, WrongVersionSchemaAndShape) {
  EXPECT_EQ(ErrorAfter([](nlohmann::json& j) { j["version"] = 2; }),
            "/version: 2, this loadplan reads version 1");
  EXPECT_EQ(ErrorAfter([](nlohmann::json& j) { j["schema"] = "x"; }),
            "/schema: \"x\", expected \"loadplan-machine-profile\"");
  EXPECT_EQ(ErrorAfter([](nlohmann::json& j) { j["rates"] = 5; }), "/rates: expected an object");
}

TEST(Profile, UnknownKeyIsNamed) {
  EXPECT_EQ(ErrorAfter([](nlohmann::json& j) { j["rates"]["pinned_h2dd"] = 1; }),
            "/rates/pinned_h2dd: unknown key");
}

TEST(Profile, DuplicateKeyIsAnError) {
  std::string text = Text(DefaultH200Profile());
  const std::string key = "\"pinned_h2d\":";
  const size_t at = text.find(key);
  ASSERT_NE(at, std::string::npos);
  text.insert(at, key + "1,");
  base::Result<MachineProfile> r = ParseProfile(text);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "/rates/pinned_h2d: duplicate key");
}

TEST(Profile, NotJson) {
  base::Result<MachineProfile> r = ParseProfile("{\"schema\": ");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not JSON"), std::string::npos);
  EXPECT_FALSE(ReadProfileFile("/nonexistent/profile.json").ok());
}

TEST(Profile, KernelRateFallsBackToTheDefault) {
  MachineProfile p = DefaultH200Profile();
  bool measured = true;
  EXPECT_EQ(KernelRate(p, "no_such_kernel", &measured), p.default_kernel_rate);
  EXPECT_FALSE(measured);
  EXPECT_EQ(KernelRate(p, "copy", &measured), p.kernels.at("copy"));
  EXPECT_TRUE(measured);
}

}  // namespace
}  // namespace loadplan::simulator::timing

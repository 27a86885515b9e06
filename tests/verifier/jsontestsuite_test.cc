// Every file of the JSONTestSuite parsing corpus: ParseManifest returns, with at
// least one error (none is a manifest); invalid JSON (n_*) is J1/J2 without a model.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>

#include "verifier/parse.h"

namespace loadplan::verifier {
namespace {

namespace fs = std::filesystem;

std::string ReadBytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

bool IsJsonCode(const std::string& c) { return c == "J1" || c == "J2"; }

TEST(JsonTestSuite, EveryFileEndsInAClearError) {
  const fs::path dir = fs::path(LOADPLAN_SHARED_DATA) / "jsontestsuite" / "test_parsing";
  if (!fs::exists(dir)) GTEST_SKIP() << "no corpus at " << dir;
  int files = 0, y = 0, n = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    ++files;
    ParseOutput out = ParseManifest(ReadBytes(e.path()));
    ASSERT_FALSE(out.diags.empty()) << name;
    bool has_error = false;
    for (const Diagnostic& d : out.diags) has_error = has_error || d.severity == Severity::kError;
    EXPECT_TRUE(has_error) << name;
    // J1/J2 iff there is no model: the two classes never mix.
    EXPECT_EQ(!out.manifest.has_value(), IsJsonCode(out.diags[0].code)) << name;
    if (name.starts_with("n_")) {
      ++n;
      EXPECT_FALSE(out.manifest.has_value()) << name << ": invalid JSON accepted";
      EXPECT_TRUE(IsJsonCode(out.diags[0].code)) << name;
    } else if (name.starts_with("y_")) {
      ++y;
      // Valid JSON, not a manifest: a structure error, never "not JSON"
      EXPECT_TRUE(out.manifest.has_value()) << name << ": " << out.diags[0].message;
    } else if (name.find("overflow") != std::string::npos ||
               name.find("huge_exp") != std::string::npos ||
               name.find("too_big") != std::string::npos) {
      // Numbers beyond a double ("1.5e+9999") are JSON too: a model, not J1.
      EXPECT_TRUE(out.manifest.has_value()) << name << ": " << out.diags[0].message;
    }
  }
  EXPECT_EQ(files, 318);
  EXPECT_EQ(y, 95);
  EXPECT_EQ(n, 188);
}

}  // namespace
}  // namespace loadplan::verifier

// ProbeMappedPages: a cost per page above 0 and below a millisecond on a file in the page
// cache, its pages and runs counted; SolveMapCosts recovers the figures behind two times; fewer
// gathers than threads take a thread a gather; a file smaller than a gather, and one shorter than
// its descriptor says, are errors that say so.
#include "backend/measure/map_read_probe.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/backend/scratch_file.h"

namespace loadplan::backend {
namespace {

// A file of `bytes` (written, so in the page cache), removed with the fixture.
class MapReadProbeTest : public ::testing::Test {
 protected:
  void Write(uint64_t bytes) {
    file_.emplace("loadplan-map-probe-", std::vector<uint8_t>(bytes, 'x'));
    ASSERT_GE(file_->fd(), 0);
    path_ = file_->path();
  }
  [[nodiscard]] FileRef Ref(uint64_t bytes) const { return file_->Ref(bytes); }
  std::optional<test_support::ScratchFile> file_;
  std::string path_;
};

TEST_F(MapReadProbeTest, APageCostsMoreThanNothingAndLessThanAMillisecond) {
  Write(uint64_t{16} << 20);  // 4 gathers of 4 MiB a pattern: 1,021 and 1,024 pages
  const base::Result<MapReadCost> c = ProbeMappedPages(Ref(uint64_t{16} << 20), 2);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->pages, 4u * (1021u + 1024u));
  EXPECT_EQ(c->runs, 4u * (256u + 65536u));
  EXPECT_EQ(c->threads, 2u);
  EXPECT_GT(c->per_page_s, 0);
  EXPECT_LT(c->per_page_s, 1e-3);
  EXPECT_LT(c->per_run_s, 1e-4);  // never negative: SolveMapCosts' tests
  const base::Result<MapReadCost> wide = ProbeMappedPages(Ref(uint64_t{16} << 20), 12);
  ASSERT_TRUE(wide.ok()) << wide.status().message();
  EXPECT_EQ(wide->threads, 4u);  // a thread a gather
  const base::Result<MapReadCost> capped =
      ProbeMappedPages(Ref(uint64_t{16} << 20), 1, uint64_t{8} << 20);
  ASSERT_TRUE(capped.ok()) << capped.status().message();
  EXPECT_EQ(capped->pages, 2u * (1021u + 1024u));
}

TEST_F(MapReadProbeTest, TooSmallAFileOrAShortOneIsAnError) {
  Write(uint64_t{1} << 20);
  const base::Result<MapReadCost> small = ProbeMappedPages(Ref(uint64_t{1} << 20), 2);
  ASSERT_FALSE(small.ok());
  EXPECT_NE(small.status().message().find("smaller than one gather"), std::string::npos)
      << small.status().message();
  // The caller says the file is larger than it is: the mapping ends where the file does.
  const base::Result<MapReadCost> past = ProbeMappedPages(Ref(uint64_t{64} << 20), 2);
  ASSERT_FALSE(past.ok());
  EXPECT_EQ(past.status().kind(), base::ErrorKind::kIo);
  EXPECT_NE(past.status().message().find(path_), std::string::npos) << past.status().message();
}

// The two patterns' times solved back into the figures that made them; noise that would make a
// figure negative gives the documented fallbacks, never a negative cost or a free page.
TEST(SolveMapCosts, RecoversThePageAndRunCostsThatMadeTheTimes) {
  const double page = 4e-8, run = 5e-9;
  const MapReadCost c = SolveMapCosts(1021 * page + 256 * run, 1024 * page + 65536 * run);
  EXPECT_NEAR(c.per_page_s, page, 1e-15);
  EXPECT_NEAR(c.per_run_s, run, 1e-17);
  // The dense pattern no slower than its pages: no run cost, the pages take the sparse time.
  const MapReadCost no_runs = SolveMapCosts(1021 * page, 1000 * page);
  EXPECT_EQ(no_runs.per_run_s, 0);
  EXPECT_NEAR(no_runs.per_page_s, page, 1e-15);
  // The dense pattern far slower than the sparse one's runs allow: half a page, runs the rest.
  const double sparse = 1021 * page, dense = 1e3 * sparse;
  const MapReadCost no_pages = SolveMapCosts(sparse, dense);
  EXPECT_NEAR(no_pages.per_page_s, page / 2, 1e-15);
  EXPECT_NEAR(no_pages.per_run_s, (dense - 1024 * page / 2) / 65536, 1e-15);
}

}  // namespace
}  // namespace loadplan::backend

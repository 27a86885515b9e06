// Tests of the exact search portfolio: same result for every thread count, never worse than the
// single search, valid placements.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <string>

#include "simulator/check/placement_check.h"
#include "simulator/placement/placement.h"

namespace loadplan::simulator {
namespace {

bool Valid(const PlacementProblem& p, const Placement& r) {
  std::vector<PlacedBuffer> placed;
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    const PlacementBuffer& b = p.buffers[i];
    placed.push_back({b.id, b.lower, b.upper, b.size, r.offsets.at(i)});
  }
  return CheckPlacement(placed, {.height = r.height, .alignment = p.alignment}).empty();
}

PlacementProblem Challenging(const std::string& name) {
  const std::string path =
      std::string(LOADPLAN_SHARED_DATA) + "/minimalloc/challenging/" + name + ".1048576.csv";
  const CsvReadResult read = ReadPlacementCsvFile(path);
  if (!read.problem) throw std::runtime_error("cannot read " + path);
  return *read.problem;
}

// A small budget per member keeps the test quick; D and J do not finish within it, so every
// member runs to its budget and the stop signal plays no part; C is proven by member 0.
PlacementOptions SmallBudget(size_t threads) {
  PlacementOptions options;
  options.work_budget = 10'000'000;
  options.portfolio = 8;
  options.threads = threads;
  return options;
}

TEST(PlacementPortfolio, SameResultForEveryThreadCount) {
  for (const std::string name : {"C", "D", "J"}) {
    const PlacementProblem p = Challenging(name);
    const Placement incumbent = BestFitPlace(p);
    const PortfolioResult one = PortfolioPlace(p, incumbent, SmallBudget(1));
    for (const size_t threads : {2, 8}) {
      const PortfolioResult many = PortfolioPlace(p, incumbent, SmallBudget(threads));
      EXPECT_EQ(many.best.placement, one.best.placement) << name << " threads " << threads;
      EXPECT_EQ(many.member, one.member) << name;
      EXPECT_EQ(many.heights, one.heights) << name;
      EXPECT_EQ(many.work, one.work) << name;
    }
  }
}

TEST(PlacementPortfolio, NeverWorseThanTheSingleSearchAndValid) {
  for (const std::string name : {"C", "D", "J"}) {
    const PlacementProblem p = Challenging(name);
    const Placement incumbent = BestFitPlace(p);
    const ExactResult single = ExactPlace(p, incumbent, SmallBudget(1));
    const PortfolioResult pf = PortfolioPlace(p, incumbent, SmallBudget(2));
    EXPECT_EQ(pf.heights.at(0), single.placement.height) << name;  // member 0 is the single one
    EXPECT_LE(pf.best.placement.height, single.placement.height) << name;
    EXPECT_EQ(pf.best.placement.height, pf.heights.at(pf.member)) << name;
    EXPECT_TRUE(Valid(p, pf.best.placement)) << name;
    EXPECT_EQ(pf.best.placement.height, PlacementHeight(p, pf.best.placement.offsets)) << name;
  }
}

TEST(PlacementPortfolio, OneMemberIsTheSingleSearch) {
  const PlacementProblem p = Challenging("D");
  PlacementOptions options = SmallBudget(4);
  options.portfolio = 1;
  const Placement incumbent = BestFitPlace(p);
  EXPECT_EQ(PortfolioPlace(p, incumbent, options).best.placement,
            ExactPlace(p, incumbent, options).placement);
  EXPECT_EQ(Place(p, options).value(), ExactPlace(p, incumbent, options).placement);
}

// D with a few members at a larger budget: the portfolio goes below the single search.
TEST(PlacementPortfolio, BeatsTheSingleSearchOnD) {
  const PlacementProblem p = Challenging("D");
  PlacementOptions options = SmallBudget(2);
  options.work_budget = 50'000'000;
  options.portfolio = 2;
  const PortfolioResult pf = PortfolioPlace(p, BestFitPlace(p), options);
  EXPECT_LT(pf.best.placement.height, pf.heights.at(0));
  EXPECT_TRUE(Valid(p, pf.best.placement));
}

// Tiny problems: the stop signal (members proven optimal early) with every thread count.
RC_GTEST_PROP(PortfolioProperty, ValidAndIndependentOfThreads, ()) {
  const int n = *rc::gen::inRange(1, 14);
  PlacementProblem p;
  for (int i = 0; i < n; ++i) {
    const int64_t lower = *rc::gen::inRange<int64_t>(0, 8);
    p.buffers.push_back({.id = "b" + std::to_string(i),
                         .lower = lower,
                         .upper = lower + *rc::gen::inRange<int64_t>(1, 6),
                         .size = *rc::gen::inRange<uint64_t>(1, 9)});
  }
  PlacementOptions options;
  options.policy = PlacementPolicy::kExact;
  options.node_budget = *rc::gen::element<uint64_t>(3, 50, 20'000);
  options.threads = 1;
  const Placement one = Place(p, options).value();
  RC_ASSERT(Valid(p, one));
  RC_ASSERT(one.height >= LowerBound(p));
  for (const size_t threads : {2, 5}) {
    options.threads = threads;
    RC_ASSERT(Place(p, options).value() == one);
  }
}

}  // namespace
}  // namespace loadplan::simulator

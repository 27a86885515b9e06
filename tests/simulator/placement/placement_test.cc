// Tests of the placement engine: hand cases, CSV, properties against brute force, MiniMalloc files.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "simulator/check/placement_check.h"
#include "simulator/placement/placement.h"

namespace loadplan::simulator {
namespace {

constexpr PlacementPolicy kAllPolicies[] = {PlacementPolicy::kFirstFit, PlacementPolicy::kBestFit,
                                            PlacementPolicy::kExact, PlacementPolicy::kBest};

// Place() on a problem the test knows is valid: an error fails the test (gtest and
// RapidCheck both report an escaping exception).
Placement Placed(const PlacementProblem& p, const PlacementOptions& options = {}) {
  base::Result<Placement> r = Place(p, options);
  if (!r.ok()) throw std::runtime_error("Place: " + r.status().message());
  return std::move(r).value();
}

PlacementOptions WithPolicy(PlacementPolicy policy) {
  PlacementOptions options;
  options.policy = policy;
  options.node_budget = 200'000;
  return options;
}

uint64_t RoundUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

std::vector<PlacementViolation> Violations(const PlacementProblem& p, const Placement& r) {
  std::vector<PlacedBuffer> placed;
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    const PlacementBuffer& b = p.buffers[i];
    placed.push_back({b.id, b.lower, b.upper, b.size, r.offsets.at(i)});
  }
  return CheckPlacement(placed, {.height = r.height, .alignment = p.alignment});
}

bool Live(const PlacementBuffer& b) { return b.lower < b.upper && b.size > 0; }
bool Conflict(const PlacementBuffer& a, const PlacementBuffer& b) {
  return Live(a) && Live(b) && a.lower < b.upper && b.lower < a.upper;
}

// Lowest aligned offset for buffer i that is free of the `placed` buffers it overlaps in time.
uint64_t LowestFree(const PlacementProblem& p, size_t i, const std::vector<size_t>& placed,
                    const std::vector<uint64_t>& offsets) {
  const uint64_t a = std::max<uint64_t>(1, p.alignment);
  std::vector<uint64_t> candidates = {0};
  for (const size_t j : placed) {
    if (Conflict(p.buffers[i], p.buffers[j]))
      candidates.push_back(offsets[j] + RoundUp(p.buffers[j].size, a));
  }
  std::sort(candidates.begin(), candidates.end());
  for (const uint64_t c : candidates) {
    const bool free = std::none_of(placed.begin(), placed.end(), [&](size_t j) {
      return Conflict(p.buffers[i], p.buffers[j]) &&
             c < offsets[j] + RoundUp(p.buffers[j].size, a) &&
             offsets[j] < c + RoundUp(p.buffers[i].size, a);
    });
    if (free) return c;
  }
  return candidates.back();
}

// Optimum by brute force: first fit in every order (the best order reaches the optimum).
uint64_t BruteForceOptimum(const PlacementProblem& p) {
  const uint64_t a = std::max<uint64_t>(1, p.alignment);
  std::vector<size_t> perm(p.buffers.size());
  std::iota(perm.begin(), perm.end(), 0);
  uint64_t best = UINT64_MAX;
  do {
    std::vector<uint64_t> offsets(p.buffers.size(), 0);
    std::vector<size_t> placed;
    uint64_t height = 0;
    for (const size_t i : perm) {
      if (!Live(p.buffers[i])) continue;
      offsets[i] = LowestFree(p, i, placed, offsets);
      placed.push_back(i);
      height = std::max(height, offsets[i] + RoundUp(p.buffers[i].size, a));
    }
    best = std::min(best, height);
  } while (std::next_permutation(perm.begin(), perm.end()));
  return best;
}

rc::Gen<PlacementProblem> SmallProblem(int max_buffers) {
  return rc::gen::exec([max_buffers] {
    const int n = *rc::gen::inRange(0, max_buffers + 1);
    PlacementProblem p;
    p.alignment = *rc::gen::element<uint64_t>(1, 1, 2, 4, 3);
    for (int i = 0; i < n; ++i) {
      const int64_t lower = *rc::gen::inRange<int64_t>(0, 8);
      const int64_t length = *rc::gen::inRange<int64_t>(*rc::gen::element<int64_t>(0, 1), 6);
      const uint64_t size = *rc::gen::inRange<uint64_t>(*rc::gen::element<uint64_t>(0, 1), 9);
      p.buffers.push_back({"b" + std::to_string(i), lower, lower + length, size});
    }
    return p;
  });
}

TEST(Placement, DisjointLifetimesShareOffsetZero) {
  const PlacementProblem p{.buffers = {{"a", 0, 2, 100}, {"b", 2, 4, 50}, {"c", 4, 9, 70}}};
  for (const PlacementPolicy policy : kAllPolicies) {
    const Placement r = Placed(p, WithPolicy(policy));
    EXPECT_EQ(r.offsets, (std::vector<uint64_t>{0, 0, 0})) << PlacementPolicyName(policy);
    EXPECT_EQ(r.height, 100u);
  }
}

TEST(Placement, ProgressNamesEachStageAndEndsWithTheSamePlacement) {
  PlacementProblem p;
  for (int i = 0; i < 70000; ++i) p.buffers.push_back({"b" + std::to_string(i), i, i + 3, 64});
  std::vector<std::pair<std::string, size_t>> seen;  // (stage, placed)
  PlacementOptions o = WithPolicy(PlacementPolicy::kBestFit);
  o.progress = [&](std::string_view stage, size_t placed, size_t total) {
    EXPECT_EQ(total, 70000u);
    seen.emplace_back(stage, placed);
  };
  const Placement with = Placed(p, o);
  EXPECT_EQ(with.offsets, Placed(p, WithPolicy(PlacementPolicy::kBestFit)).offsets);
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.front(), (std::pair<std::string, size_t>{"first-fit", 0}));
  EXPECT_TRUE(std::any_of(seen.begin(), seen.end(), [](const auto& s) {
    return s.first == "first-fit" && s.second == 65536;  // within a stage, every 65536
  }));
  EXPECT_TRUE(std::any_of(seen.begin(), seen.end(),
                          [](const auto& s) { return s.first.starts_with("greedy"); }));
}

TEST(Placement, NestedLifetimesStack) {
  const PlacementProblem p{.buffers = {{"outer", 0, 10, 8}, {"inner", 3, 5, 4}, {"late", 6, 8, 2}}};
  const Placement r = Placed(p, WithPolicy(PlacementPolicy::kFirstFit));
  EXPECT_EQ(r.offsets, (std::vector<uint64_t>{0, 8, 8}));
  EXPECT_EQ(r.height, 12u);
  EXPECT_EQ(LowerBound(p), 12u);
}

TEST(Placement, AlignmentRoundsOffsetsAndHeight) {
  const PlacementProblem p{.buffers = {{"a", 0, 4, 5}, {"b", 1, 3, 3}, {"c", 2, 6, 1}},
                           .alignment = 4};
  EXPECT_EQ(LowerBound(p), 16u);  // at time 2: 8 + 4 + 4
  for (const PlacementPolicy policy : kAllPolicies) {
    const Placement r = Placed(p, WithPolicy(policy));
    for (const uint64_t o : r.offsets) EXPECT_EQ(o % 4, 0u);
    EXPECT_EQ(r.height, 16u) << PlacementPolicyName(policy);
    EXPECT_TRUE(Violations(p, r).empty());
  }
}

TEST(Placement, FirstFitReusesTheLowestGap) {
  // b frees [4, 8) at time 5; d arrives then and fits the gap below c.
  const PlacementProblem p{
      .buffers = {{"a", 0, 10, 4}, {"b", 0, 5, 4}, {"c", 1, 10, 4}, {"d", 5, 9, 3}}};
  const Placement r = FirstFitPlace(p);
  EXPECT_EQ(r.offsets, (std::vector<uint64_t>{0, 4, 8, 4}));
  EXPECT_EQ(r.height, 12u);
}

TEST(Placement, ArrivalTiesBreakById) {
  const PlacementProblem p{.buffers = {{"z", 0, 2, 1}, {"a", 0, 2, 2}}};
  EXPECT_EQ(FirstFitPlace(p).offsets, (std::vector<uint64_t>{2, 0}));
}

TEST(Placement, EmptyAndNonOccupyingBuffers) {
  EXPECT_EQ(Placed({}).height, 0u);
  const PlacementProblem p{.buffers = {{"zero", 0, 5, 0}, {"dead", 3, 3, 9}, {"x", 0, 5, 7}}};
  for (const PlacementPolicy policy : kAllPolicies) {
    const Placement r = Placed(p, WithPolicy(policy));
    EXPECT_EQ(r.offsets, (std::vector<uint64_t>{0, 0, 0}));
    EXPECT_EQ(r.height, 7u);
  }
}

TEST(Placement, InvalidProblemIsReportedNotOverflowed) {
  const PlacementProblem p{
      .buffers = {{"a", 0, 1, uint64_t{1} << 62}, {"b", 0, 1, uint64_t{1} << 62}}};
  EXPECT_FALSE(ValidateProblem(p).ok());
  EXPECT_TRUE(ValidateProblem({.buffers = {{"a", 0, 1, 5}}}).ok());
  const base::Result<Placement> r = Place(p);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().kind(), base::ErrorKind::kInvalidInput);
  EXPECT_EQ(r.status().message(), "total of rounded sizes exceeds 2^62 at buffer 'b'");
}

TEST(Placement, PolicyNamesRoundTrip) {
  for (const PlacementPolicy policy : kAllPolicies) {
    EXPECT_EQ(ParsePlacementPolicy(PlacementPolicyName(policy)), policy);
  }
  EXPECT_FALSE(ParsePlacementPolicy("worst-fit").has_value());
}

TEST(Placement, ExactReachesATightLowerBound) {
  const PlacementProblem p{
      .buffers = {{"long", 0, 10, 2}, {"l", 0, 5, 3}, {"r", 5, 10, 3}, {"m", 3, 7, 1}}};
  const Placement r = Placed(p, WithPolicy(PlacementPolicy::kExact));
  EXPECT_EQ(r.height, LowerBound(p));
  EXPECT_TRUE(Violations(p, r).empty());
}

TEST(PlacementCsv, ReadsMiniMallocFormatWithExtraColumns) {
  const CsvReadResult r = ReadPlacementCsv("size,id,lower,upper,hint\r\n4,a,0,3,x\n\n2,b,1,2,y\n");
  ASSERT_TRUE(r.errors.empty());
  ASSERT_TRUE(r.problem);
  EXPECT_EQ(r.problem->buffers, (std::vector<PlacementBuffer>{{"a", 0, 3, 4}, {"b", 1, 2, 2}}));
}

TEST(PlacementCsv, StartEndColumnsAreInclusive) {
  const CsvReadResult r = ReadPlacementCsv("id,start,end,size\na,0,2,4\n");
  ASSERT_TRUE(r.problem);
  EXPECT_EQ(r.problem->buffers.at(0).upper, 3);
}

TEST(PlacementCsv, ErrorsCarryLineNumbers) {
  const CsvReadResult r = ReadPlacementCsv(
      "id,lower,upper,size\na,0,x,4\nb,5,5,1\nc,0,1\nd,0,1,-3\ne,0,1,2\ne,1,2,2\n");
  EXPECT_FALSE(r.problem);
  std::vector<int> lines;
  for (const CsvError& e : r.errors) lines.push_back(e.line);
  EXPECT_EQ(lines, (std::vector<int>{2, 3, 4, 5, 7}));
}

TEST(PlacementCsv, MissingColumnsAndEmptyInput) {
  EXPECT_EQ(ReadPlacementCsv("id,lower,size\n").errors.size(), 1u);
  EXPECT_EQ(ReadPlacementCsv("").errors.at(0).line, 1);
  EXPECT_EQ(ReadPlacementCsvFile("/nonexistent/x.csv").errors.size(), 1u);
  const CsvReadResult header_only = ReadPlacementCsv("id,lower,upper,size\n");
  ASSERT_TRUE(header_only.problem);
  EXPECT_TRUE(header_only.problem->buffers.empty());
}

TEST(PlacementCsv, WriteAddsOffsetsAndReadsBack) {
  const PlacementProblem p{.buffers = {{"a", 0, 3, 4}, {"b", 1, 2, 2}}};
  const Placement r = FirstFitPlace(p);
  const std::string text = WritePlacementCsv(p, r);
  EXPECT_EQ(text, "id,lower,upper,size,offset\na,0,3,4,0\nb,1,2,2,4\n");
  const CsvReadResult back = ReadPlacementCsv(text);
  ASSERT_TRUE(back.problem);
  EXPECT_EQ(*back.problem, p);
}

// Each policy on MiniMalloc's files: valid placements (quality is measured by the benchmark).
TEST(PlacementMiniMalloc, PoliciesProduceValidPlacements) {
  const std::string dir = std::string(LOADPLAN_SHARED_DATA) + "/minimalloc/";
  for (const std::string file : {"examples/input.12.csv", "challenging/C.1048576.csv"}) {
    const CsvReadResult read = ReadPlacementCsvFile(dir + file);
    ASSERT_TRUE(read.problem) << file;
    for (const PlacementPolicy policy : kAllPolicies) {
      PlacementOptions options = WithPolicy(policy);
      options.node_budget = 20'000;
      const Placement r = Placed(*read.problem, options);
      EXPECT_TRUE(Violations(*read.problem, r).empty())
          << file << " " << PlacementPolicyName(policy);
      EXPECT_GE(r.height, LowerBound(*read.problem));
      if (file == "examples/input.12.csv") {
        EXPECT_EQ(r.height, 12u);
      }
    }
  }
}

RC_GTEST_PROP(PlacementProperty, EveryPolicyIsValidAndAboveLowerBound, ()) {
  const PlacementProblem p = *SmallProblem(12);
  for (const PlacementPolicy policy : kAllPolicies) {
    const Placement r = Placed(p, WithPolicy(policy));
    RC_ASSERT(r.offsets.size() == p.buffers.size());
    RC_ASSERT(Violations(p, r).empty());
    RC_ASSERT(r.height >= LowerBound(p));
    RC_ASSERT(r.height == PlacementHeight(p, r.offsets));
    RC_ASSERT(Placed(p, WithPolicy(policy)) == r);  // deterministic
  }
}

RC_GTEST_PROP(PlacementProperty, FirstFitTakesLowestFreeOffsetOnArrival, ()) {
  const PlacementProblem p = *SmallProblem(12);
  const Placement r = FirstFitPlace(p);
  std::vector<size_t> order(p.buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::pair(p.buffers[a].lower, p.buffers[a].id) <
           std::pair(p.buffers[b].lower, p.buffers[b].id);
  });
  std::vector<size_t> placed;
  for (const size_t i : order) {
    if (!Live(p.buffers[i])) continue;
    RC_ASSERT(r.offsets[i] == LowestFree(p, i, placed, r.offsets));
    placed.push_back(i);
  }
}

RC_GTEST_PROP(PlacementProperty, ExactMatchesBruteForceOnTinyProblems, ()) {
  const PlacementProblem p = *SmallProblem(6);
  const uint64_t optimum = BruteForceOptimum(p);
  const ExactResult exact = ExactPlace(p, BestFitPlace(p), WithPolicy(PlacementPolicy::kExact));
  RC_ASSERT(exact.placement.height == optimum);
  RC_ASSERT(exact.proven_optimal);
  RC_ASSERT(Placed(p, WithPolicy(PlacementPolicy::kExact)).height == optimum);
  RC_ASSERT(Violations(p, exact.placement).empty());
}

}  // namespace
}  // namespace loadplan::simulator

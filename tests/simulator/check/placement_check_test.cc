// Tests of the placement checker on hand-built placements (never the placement engine).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <set>
#include <tuple>

#include "simulator/check/placement_check.h"

namespace loadplan::simulator {
namespace {

using Kind = PlacementViolationKind;

// (kind, first, second) of each violation: what the tests assert, not the wording.
std::vector<std::tuple<Kind, size_t, std::optional<size_t>>> Codes(
    const std::vector<PlacementViolation>& vs) {
  std::vector<std::tuple<Kind, size_t, std::optional<size_t>>> out;
  for (const PlacementViolation& v : vs) out.emplace_back(v.kind, v.first, v.second);
  return out;
}

TEST(PlacementCheck, ValidPlacementHasNoViolations) {
  const std::vector<PlacedBuffer> bs = {{"a", 0, 4, 4, 0},
                                        {"b", 0, 4, 4, 4},  // touching in space
                                        {"c", 4, 8, 8, 0},  // touching in time (half-open)
                                        {"zero", 0, 8, 0, 4},
                                        {"dead", 5, 5, 100, 0}};
  EXPECT_TRUE(CheckPlacement(bs, {.height = 8, .alignment = 4}).empty());
}

// A placer's answer: sizes count rounded up to the alignment, a missing offset is a violation.
TEST(PlacementCheck, PlacerOutputCountsRoundedSizes) {
  const PlacementProblem p{.buffers = {{.id = "a", .lower = 0, .upper = 2, .size = 10},
                                       {.id = "b", .lower = 1, .upper = 3, .size = 10}},
                           .alignment = 4};
  EXPECT_TRUE(CheckPlacement(p, Placement{.offsets = {0, 12}, .height = 24}).empty());
  const auto rounded =
      CheckPlacement(p, Placement{.offsets = {0, 8}, .height = 20});  // 10 takes 12
  EXPECT_EQ(Codes(rounded), (decltype(Codes(rounded)){{Kind::kOverlap, 0, 1}}));
  EXPECT_FALSE(CheckPlacement(p, Placement{.offsets = {0}, .height = 24}).empty());
}

TEST(PlacementCheck, OverlapNamesBothBuffers) {
  const std::vector<PlacedBuffer> bs = {{"a", 0, 4, 4, 0}, {"b", 3, 6, 4, 2}};
  const std::vector<PlacementViolation> vs = CheckPlacement(bs, {.height = 8});
  ASSERT_EQ(Codes(vs), (decltype(Codes(vs)){{Kind::kOverlap, 0, 1}}));
  EXPECT_NE(vs[0].message.find("'a'"), std::string::npos);
  EXPECT_NE(vs[0].message.find("'b'"), std::string::npos);
}

TEST(PlacementCheck, ContainedAndLongLivedOverlapsAreAllFound) {
  // d sits inside a's bytes, arriving after b and c moved in between in offset order.
  const std::vector<PlacedBuffer> bs = {
      {"a", 0, 10, 100, 0}, {"b", 0, 10, 10, 200}, {"c", 1, 10, 10, 300}, {"d", 5, 6, 10, 50}};
  EXPECT_EQ(Codes(CheckPlacement(bs, {.height = 400})),
            (decltype(Codes({})){{Kind::kOverlap, 0, 3}}));
}

TEST(PlacementCheck, MisalignedOffset) {
  const std::vector<PlacedBuffer> bs = {{"a", 0, 1, 4, 0}, {"b", 0, 1, 4, 6}};
  EXPECT_EQ(Codes(CheckPlacement(bs, {.height = 16, .alignment = 4})),
            (decltype(Codes({})){{Kind::kMisaligned, 1, std::nullopt}}));
  EXPECT_TRUE(CheckPlacement(bs, {.height = 16, .alignment = 0}).empty());  // 0 reads as 1
}

TEST(PlacementCheck, ExceedsHeightAndOverflow) {
  const std::vector<PlacedBuffer> bs = {
      {"a", 0, 1, 4, 0}, {"b", 1, 2, 4, 6}, {"huge", 2, 3, 2, UINT64_MAX}};
  EXPECT_EQ(Codes(CheckPlacement(bs, {.height = 8})),
            (decltype(Codes({})){{Kind::kExceedsHeight, 1, std::nullopt},
                                 {Kind::kExceedsHeight, 2, std::nullopt}}));
}

TEST(PlacementCheck, MaxViolationsCapsTheList) {
  std::vector<PlacedBuffer> bs;
  for (int i = 0; i < 40; ++i) bs.push_back({"b" + std::to_string(i), 0, 1, 1, 0});
  EXPECT_EQ(CheckPlacement(bs, {.height = 1, .max_violations = 7}).size(), 7u);
  EXPECT_EQ(CheckPlacement(bs, {.height = 1}).size(), 40u * 39u / 2u);
}

// Against an O(n^2) reference on random placements with many collisions.
RC_GTEST_PROP(PlacementCheckProperty, MatchesPairwiseReference, ()) {
  const int n = *rc::gen::inRange(0, 25);
  std::vector<PlacedBuffer> bs;
  for (int i = 0; i < n; ++i) {
    const int64_t lower = *rc::gen::inRange<int64_t>(0, 6);
    bs.push_back({"b" + std::to_string(i), lower, lower + *rc::gen::inRange<int64_t>(0, 4),
                  *rc::gen::inRange<uint64_t>(0, 5), *rc::gen::inRange<uint64_t>(0, 12)});
  }
  const uint64_t height = *rc::gen::inRange<uint64_t>(0, 16);
  const uint64_t align = *rc::gen::element<uint64_t>(1, 2, 3);
  std::set<std::tuple<Kind, size_t, std::optional<size_t>>> expected;
  auto live = [](const PlacedBuffer& b) { return b.lower < b.upper && b.size > 0; };
  for (size_t i = 0; i < bs.size(); ++i) {
    if (bs[i].offset % align != 0) expected.insert({Kind::kMisaligned, i, std::nullopt});
    if (live(bs[i]) && bs[i].offset + bs[i].size > height) {
      expected.insert({Kind::kExceedsHeight, i, std::nullopt});
    }
    for (size_t j = i + 1; j < bs.size(); ++j) {
      const PlacedBuffer& a = bs[i];
      const PlacedBuffer& b = bs[j];
      if (live(a) && live(b) && a.lower < b.upper && b.lower < a.upper &&
          a.offset < b.offset + b.size && b.offset < a.offset + a.size) {
        expected.insert({Kind::kOverlap, i, j});
      }
    }
  }
  const auto got = Codes(CheckPlacement(bs, {.height = height, .alignment = align}));
  RC_ASSERT(std::set(got.begin(), got.end()) == expected);
  RC_ASSERT(got.size() == expected.size());
}

}  // namespace
}  // namespace loadplan::simulator

// Tests of the fit frontier: ladders, limits against brute force (monotone and not), statuses,
// the tables, the projections and the KV capacity of a gpt-oss-shaped serve expression.
#include "simulator/capacity/frontier.h"

#include <limits>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "simulator/capacity/ladder.h"
#include "simulator/capacity/limit.h"

namespace loadplan::simulator::capacity {
namespace {

using verifier::Expr;

Expr Parse(std::string_view text) {
  base::Result<Expr> r = verifier::ParseExpr(text);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : Expr::Const(0);
}

PeakModel Model(std::vector<std::string_view> phases, verifier::Box box, int64_t budget) {
  PeakModel m{.phases = {}, .box = std::move(box), .budget = budget, .proof = {}};
  for (std::string_view p : phases) m.phases.push_back(Parse(p));
  return m;
}

// The serve expression of the embedded gpt-oss-120b example and the h200 preset's bytes.
constexpr std::string_view kServe =
    "36864 * batch * ctx + 36864 * batch * min(ctx, 128) + 815912 * batch + 68071456768";
constexpr int64_t kH200 = 150109106995;

PeakModel GptOss(int64_t budget = kH200) {
  return Model({"69201821696", "68071456768", kServe}, {{"batch", {1, 256}}, {"ctx", {1, 131072}}},
               budget);
}

bool FitsAt(const PeakModel& m, const verifier::Assignment& at) {
  const PeakValue v = PeakAtPoint(m, at);
  return v.bytes && *v.bytes <= m.budget;
}

TEST(Ladder, BoundsPowersOfTwoAndExtras) {
  EXPECT_EQ(Ladder({1, 256}), (std::vector<int64_t>{1, 2, 4, 8, 16, 32, 64, 128, 256}));
  EXPECT_EQ(Ladder({3, 20}, std::vector<int64_t>{5, 16, 99}),
            (std::vector<int64_t>{3, 4, 5, 8, 16, 20}));
  EXPECT_EQ(Ladder({7, 7}), (std::vector<int64_t>{7}));
  EXPECT_EQ(Ladder({0, 1}), (std::vector<int64_t>{0, 1}));
}

TEST(SolveLimit, LargestBatchAtAContextIsTheLastThatFits) {
  const PeakModel m = GptOss();
  const Limit l = SolveLimit(m, "batch", {{"ctx", 131072}});
  ASSERT_TRUE(l.largest);
  EXPECT_EQ(l.status, LimitStatus::kExact);
  EXPECT_TRUE(FitsAt(m, {{"batch", *l.largest}, {"ctx", 131072}}));
  EXPECT_FALSE(FitsAt(m, {{"batch", *l.largest + 1}, {"ctx", 131072}}));
  // (150109106995 - 68071456768) / (36864 * 131072 + 36864 * 128 + 815912) = 16.95...
  EXPECT_EQ(*l.largest, 16);
  ASSERT_TRUE(l.past);
  EXPECT_EQ(l.past->at, (verifier::Assignment{{"batch", 17}, {"ctx", 131072}}));
  EXPECT_GT(*l.past->bytes, m.budget);
  EXPECT_LE(*l.at_largest.bytes, m.budget);
}

TEST(SolveLimit, WholeRangeFitsIsExactAtTheMaximum) {
  const Limit l = SolveLimit(GptOss(), "batch", {{"ctx", 1}});
  EXPECT_EQ(l.largest, 256);
  EXPECT_EQ(l.status, LimitStatus::kExact);
  EXPECT_FALSE(l.past);
}

// x^2 - 100x + 3000 dips below 3000 on (0, 100) and climbs past it from 101: "fits up to y"
// holds to 100 although the peak is not monotone.
TEST(SolveLimit, NotMonotoneStillFindsTheFirstFailure) {
  const PeakModel m = Model({"x * x - 100 * x + 3000"}, {{"x", {0, 200}}}, 3000);
  const Limit l = SolveLimit(m, "x", {});
  EXPECT_EQ(l.largest, 100);
  EXPECT_EQ(l.status, LimitStatus::kExact);
  EXPECT_EQ(*l.past->bytes, 3101);
}

// Below 2500 only inside (0, 100): nothing fits "up to" any y, since x = 0 already passes.
TEST(SolveLimit, NothingFitsFromTheMinimumIsNone) {
  const PeakModel m = Model({"x * x - 100 * x + 3000"}, {{"x", {0, 200}}}, 2500);
  const Limit l = SolveLimit(m, "x", {});
  EXPECT_FALSE(l.largest);
  EXPECT_EQ(l.status, LimitStatus::kNone);
  ASSERT_TRUE(l.past);
  EXPECT_EQ(l.past->at, (verifier::Assignment{{"x", 0}}));
  EXPECT_EQ(l.past->bytes, 3000);
}

// (x % 7) * 100 + x first passes 650 at x = 55. Interval bounds alone prove [0, y] only up to
// y = 50 (600 + y); beyond, the proof must split. With the default budget the answer is exact;
// with one box per proof it is a lower bound, and says so, rather than a guess.
TEST(SolveLimit, ProofBudgetRunOutIsAtLeastNotExact) {
  PeakModel m = Model({"x % 7 * 100 + x"}, {{"x", {0, 200}}}, 650);
  const Limit exact = SolveLimit(m, "x", {});
  EXPECT_EQ(exact.largest, 54);
  EXPECT_EQ(exact.status, LimitStatus::kExact);
  m.proof.max_boxes = 1;
  const Limit l = SolveLimit(m, "x", {});
  ASSERT_TRUE(l.largest);
  EXPECT_LT(*l.largest, 54);
  EXPECT_EQ(l.status, LimitStatus::kAtLeast);
  ASSERT_TRUE(l.past);
  EXPECT_LE(*l.past->bytes, 650);  // the next value fits too: only the proof ran out
}

TEST(SolveLimit, EvaluationOverflowDoesNotFit) {
  const PeakModel m =
      Model({"x * 4611686018427387904"}, {{"x", {0, 8}}}, std::numeric_limits<int64_t>::max());
  const Limit l = SolveLimit(m, "x", {});
  EXPECT_EQ(l.largest, 1);
  EXPECT_EQ(l.status, LimitStatus::kExact);
  ASSERT_TRUE(l.past);
  EXPECT_FALSE(l.past->error.ok());
}

// Against brute force on small boxes: the largest y such that every y' <= y fits.
RC_GTEST_PROP(SolveLimit, MatchesBruteForce, ()) {
  const int64_t a = *rc::gen::inRange<int64_t>(-3, 4), b = *rc::gen::inRange<int64_t>(-20, 21);
  const int64_t c = *rc::gen::inRange<int64_t>(0, 5), k = *rc::gen::inRange<int64_t>(0, 12);
  const int64_t budget = *rc::gen::inRange<int64_t>(0, 400);
  const int64_t xmax = *rc::gen::inRange<int64_t>(0, 12), ymax = *rc::gen::inRange<int64_t>(0, 24);
  const int64_t x = *rc::gen::inRange<int64_t>(0, xmax + 1);
  const std::string text =
      fmt::format("{} * x * y + {} * y + {} * min(y, {}) + y * y + 100", a, b, c, k);
  const PeakModel m = Model({text}, {{"x", {0, xmax}}, {"y", {0, ymax}}}, budget);
  std::optional<int64_t> expected;
  for (int64_t y = 0; y <= ymax && FitsAt(m, {{"x", x}, {"y", y}}); ++y) expected = y;
  const Limit l = SolveLimit(m, "y", {{"x", x}});
  RC_ASSERT(l.largest == expected);
  RC_ASSERT(l.status == (expected ? LimitStatus::kExact : LimitStatus::kNone));
}

TEST(Frontier, GptOssTablesKvAndProjections) {
  const Frontier f = ComputeFrontier(GptOss(), {.extra = {{"ctx", {8192, 5000}}}});
  EXPECT_FALSE(f.fits_box);
  EXPECT_FALSE(f.fits_nowhere);
  ASSERT_EQ(f.main, (std::vector<std::string>{"ctx", "batch"}));
  EXPECT_EQ(f.ladders.at("ctx").size(), 19u);  // 1 .. 2^17 and 5000 (8192 is a power of two)
  ASSERT_EQ(f.tables.size(), 2u);
  EXPECT_EQ(f.tables[0].pinned, "ctx");
  EXPECT_EQ(f.tables[0].rows.size(), f.ladders.at("ctx").size());
  EXPECT_EQ(f.tables[1].rows.size(), f.ladders.at("batch").size());
  for (const LimitTable& t : f.tables) {
    for (const Limit& l : t.rows) {
      ASSERT_TRUE(l.largest);
      verifier::Assignment at = l.pinned;
      at[l.var] = *l.largest;
      EXPECT_TRUE(FitsAt(GptOss(), at));
      if (l.past) {
        EXPECT_GT(*l.past->bytes, kH200);
      }
    }
  }
  ASSERT_TRUE(f.kv);
  ASSERT_TRUE(f.kv->largest);
  EXPECT_EQ(f.kv->rows.back().ctx, 131072);
  EXPECT_EQ(f.kv->rows.back().max_batch, 16);
  EXPECT_EQ(f.kv->rows.back().tokens, 16 * 131072);
  for (const KvRow& r : f.kv->rows) EXPECT_LE(*r.tokens, *f.kv->largest->tokens);
  ASSERT_EQ(f.projections.size(), 2u);
  EXPECT_EQ(f.projections[0].var, "batch");
  EXPECT_EQ(f.projections[0].largest, 16);  // every ctx: the largest ctx decides
  EXPECT_EQ(f.projections[1].var, "ctx");   // every batch: batch 256 decides
  EXPECT_TRUE(FitsAt(GptOss(), {{"batch", 256}, {"ctx", *f.projections[1].largest}}));
  EXPECT_FALSE(FitsAt(GptOss(), {{"batch", 256}, {"ctx", *f.projections[1].largest + 1}}));
}

TEST(Frontier, FitsEverywhereAndNowhere) {
  EXPECT_TRUE(ComputeFrontier(GptOss(int64_t{2} << 40)).fits_box);
  const Frontier none = ComputeFrontier(GptOss(int64_t{60} << 30));  // below the pool itself
  EXPECT_TRUE(none.fits_nowhere);
  for (const Limit& l : none.tables[0].rows) EXPECT_EQ(l.status, LimitStatus::kNone);
}

// A third variable ranges over its whole box in every answer.
TEST(Frontier, ThirdVariableRangesOverItsBox) {
  const PeakModel m = Model({"a * b + 10 * c"}, {{"a", {1, 8}}, {"b", {1, 8}}, {"c", {0, 3}}}, 40);
  const Frontier f = ComputeFrontier(m);
  ASSERT_EQ(f.main, (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(f.kv);
  // a = 2: 2b + 30 <= 40 for every c: b <= 5.
  EXPECT_EQ(f.tables[0].rows[1].pinned.at("a"), 2);
  EXPECT_EQ(f.tables[0].rows[1].largest, 5);
  ASSERT_EQ(f.projections.size(), 3u);
  EXPECT_EQ(f.projections[2].var, "c");
  EXPECT_EQ(f.projections[2].largest, std::nullopt);  // a = b = 8 alone is 64 > 40
  EXPECT_EQ(f.projections[0].largest, 1);             // b = 8, c = 3: 8a + 30 <= 40
}

}  // namespace
}  // namespace loadplan::simulator::capacity

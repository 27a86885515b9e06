// The fit frontier: what fits a byte budget, across the variable box (docs/capacity.md).
//
// For the two main variables u, w (`ctx` and `batch` when both exist, else the first two by
// name) and each value a on u's ladder: the largest w that fits with u = a (SolveLimit), and the
// same the other way round. Variables beyond the two range over their whole box in every answer
// (so each answer holds whatever they are). Every variable also gets a projection: its largest
// value that fits with every other variable over its whole box. With `batch` and `ctx`: the KV
// token capacity at each ladder ctx (largest batch x ctx) and "maximum concurrency at ctx C"
// (the largest batch that fits at ctx C).
//
//   batch ^
//     256 |........                 every row: the largest batch at that ctx (bisection),
//         |########:......          proven to fit below the line, evaluated over it above
//      37 |###############:.....
//       1 +-------------------->  ctx (ladder: 1, 2, 4, ..., 131072, --at values)
//
// Cost: (|ladder(u)| + |ladder(w)| + #variables) x (log2 range + 2) proofs per phase.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "simulator/capacity/limit.h"
#include "simulator/capacity/peak_model.h"

namespace loadplan::simulator::capacity {

// The limits of `solved` for each ladder value of `pinned` (in ladder order).
struct LimitTable {
  std::string pinned, solved;
  std::vector<Limit> rows;  // rows[i].pinned[pinned] == the i-th ladder value
  bool operator==(const LimitTable&) const = default;
};

// At one ctx C: the largest batch that fits (the maximum concurrency) and batch x C tokens.
struct KvRow {
  int64_t ctx = 0;
  std::optional<int64_t> max_batch;  // none: not even batch.min fits at this ctx
  std::optional<int64_t> tokens;     // max_batch * ctx
  LimitStatus status = LimitStatus::kUnknown;
  bool operator==(const KvRow&) const = default;
};
struct KvCapacity {
  std::vector<KvRow> rows;       // one per ladder ctx
  std::optional<KvRow> largest;  // the row with the most tokens (the smallest ctx on ties)
  bool operator==(const KvCapacity&) const = default;
};

struct Frontier {
  int64_t budget = 0;
  bool fits_box = false;          // the peak fits over the whole box: every limit is the max
  bool fits_nowhere = false;      // not even at every variable's minimum
  std::vector<std::string> main;  // the two (or one) main variables
  std::map<std::string, std::vector<int64_t>> ladders;  // per main variable
  std::vector<LimitTable> tables;  // [0]: main[1] per ladder main[0]; [1]: the other way
  std::vector<Limit> projections;  // per variable (name order), the others over their box
  std::optional<KvCapacity> kv;    // with variables `batch` and `ctx`
  bool operator==(const Frontier&) const = default;
};

struct FrontierOptions {
  std::map<std::string, std::vector<int64_t>> extra;  // more ladder values (the --at values)
};

Frontier ComputeFrontier(const PeakModel& m, const FrontierOptions& options = {});

// The two main variables of a box: {ctx, batch} when both exist, else the first two by name
// (fewer when the box has fewer).
std::vector<std::string> MainVariables(const verifier::Box& box);

// The KV rows from a table of batch limits per ctx (pinned "ctx", solved "batch").
KvCapacity KvCapacityOf(const LimitTable& batch_per_ctx);

}  // namespace loadplan::simulator::capacity

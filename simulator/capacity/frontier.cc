// ComputeFrontier: the ladder tables, the per-variable projections and the KV capacity.
#include "simulator/capacity/frontier.h"

#include <span>

#include "simulator/capacity/ladder.h"

namespace loadplan::simulator::capacity {
namespace {

std::span<const int64_t> ExtraOf(const FrontierOptions& o, const std::string& var) {
  const auto it = o.extra.find(var);
  if (it == o.extra.end()) return {};
  return it->second;
}

LimitTable TableOf(const PeakModel& m, const std::string& pinned, const std::string& solved,
                   const std::vector<int64_t>& ladder) {
  LimitTable t{.pinned = pinned, .solved = solved, .rows = {}};
  for (const int64_t a : ladder) t.rows.push_back(SolveLimit(m, solved, {{pinned, a}}));
  return t;
}

}  // namespace

std::vector<std::string> MainVariables(const verifier::Box& box) {
  if (box.contains("batch") && box.contains("ctx")) return {"ctx", "batch"};
  std::vector<std::string> out;
  for (const auto& [name, range] : box) {
    if (out.size() < 2) out.push_back(name);
  }
  return out;
}

KvCapacity KvCapacityOf(const LimitTable& batch_per_ctx) {
  KvCapacity out;
  for (const Limit& l : batch_per_ctx.rows) {
    KvRow row{.ctx = l.pinned.at(batch_per_ctx.pinned),
              .max_batch = l.largest,
              .tokens = {},
              .status = l.status};
    int64_t tokens = 0;
    if (l.largest && !__builtin_mul_overflow(*l.largest, row.ctx, &tokens)) row.tokens = tokens;
    if (row.tokens && (!out.largest || *row.tokens > *out.largest->tokens)) out.largest = row;
    out.rows.push_back(row);
  }
  return out;
}

Frontier ComputeFrontier(const PeakModel& m, const FrontierOptions& options) {
  Frontier f{.budget = m.budget, .main = MainVariables(m.box)};
  f.fits_box = FitsOver(m, m.box).truth == verifier::Truth::kTrue;
  verifier::Assignment minimum;
  for (const auto& [name, range] : m.box) minimum[name] = range.min;
  f.fits_nowhere = Exceeds(PeakAtPoint(m, minimum), m.budget);
  for (const std::string& v : f.main) f.ladders[v] = Ladder(m.box.at(v), ExtraOf(options, v));
  if (f.main.size() == 2) {
    for (int i = 0; i < 2; ++i) {
      const std::string& pinned = f.main[i];
      f.tables.push_back(TableOf(m, pinned, f.main[1 - i], f.ladders[pinned]));
    }
    if (f.main[0] == "ctx" && f.main[1] == "batch") f.kv = KvCapacityOf(f.tables[0]);
  }
  for (const auto& [name, range] : m.box) f.projections.push_back(SolveLimit(m, name, {}));
  return f;
}

}  // namespace loadplan::simulator::capacity

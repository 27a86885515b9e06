// `loadplan plan`'s fit frontier as text: per ladder value the largest value of the other main
// variable that fits, the projections, the KV token capacity (docs/capacity.md).
#include <fmt/format.h>

#include "api/plan_frontier.h"
#include "base/bytes.h"
#include "cli/cmd_plan_report.h"

namespace loadplan::cli {
namespace {

namespace cap = simulator::capacity;

// Units by magnitude: "512 B", "51.55 KiB", "1.98 GiB".
std::string Bytes(std::optional<int64_t> b) {
  if (!b) return "unknown";
  if (*b < 0) return fmt::format("{} B", *b);
  return base::FormatBytesAuto(static_cast<uint64_t>(*b));
}

std::string Largest(const cap::Limit& l) {
  switch (l.status) {
    case cap::LimitStatus::kExact: return fmt::format("{}", *l.largest);
    case cap::LimitStatus::kAtLeast: return fmt::format(">= {}", *l.largest);
    case cap::LimitStatus::kNone: return "none";
    case cap::LimitStatus::kUnknown: return "unknown";
  }
  return "unknown";
}

std::string Headroom(const cap::Limit& l, int64_t budget) {
  if (!l.largest || !l.at_largest.bytes) return "";
  return Bytes(budget - *l.at_largest.bytes);
}

// Where it stops fitting: how far the peak one past the limit (or at the minimum when none
// fits) is over the budget.
std::string Past(const cap::Limit& l, int64_t budget) {
  if (!l.past) return l.largest ? "(its max)" : "";
  if (!l.past->error.ok()) return "does not evaluate";
  if (!l.past->bytes) return "unknown";
  if (*l.past->bytes <= budget) return "fits (not proven beyond)";
  return "+" + Bytes(*l.past->bytes - budget);
}

std::string Table(const cap::LimitTable& t, int64_t budget, bool kv) {
  std::string out = fmt::format("  {:>10} {:>10}{}  {:>14}  {:>12}  {:>16}\n", t.pinned, t.solved,
                                kv ? fmt::format(" {:>12}", "KV tokens") : "", "peak there",
                                "headroom", fmt::format("{} + 1: over", t.solved));
  for (const cap::Limit& l : t.rows) {
    const std::string tokens =
        !kv ? ""
            : fmt::format(" {:>12}",
                          l.largest ? fmt::format("{}", *l.largest * l.pinned.at(t.pinned)) : "");
    out += fmt::format("  {:>10} {:>10}{}  {:>14}  {:>12}  {:>16}\n", l.pinned.at(t.pinned),
                       Largest(l), tokens, l.largest ? Bytes(l.at_largest.bytes) : "",
                       Headroom(l, budget), Past(l, budget));
  }
  return out;
}

std::string Projections(const cap::Frontier& f) {
  std::string out = "  each variable alone, every other over its whole box:";
  for (const cap::Limit& l : f.projections) out += fmt::format(" {} {};", l.var, Largest(l));
  out.back() = '\n';
  return out;
}

std::string Kv(const cap::Frontier& f) {
  if (!f.kv || !f.kv->largest) return {};
  const cap::KvRow& k = *f.kv->largest;
  return fmt::format(
      "  KV token capacity: {} tokens (batch {} x ctx {}), the most over the ctx ladder\n",
      *k.tokens, *k.max_batch, k.ctx);
}

}  // namespace

std::string FrontierText(const verifier::Manifest& m, const PlanReport& r) {
  const std::optional<cap::Frontier> f = api::ReportFrontier(m, r);
  if (!f) return {};
  std::string out = fmt::format("\nwhat fits {} ({} B; the fit frontier, docs/capacity.md)\n",
                                base::FormatGiB(static_cast<uint64_t>(f->budget)), f->budget);
  if (f->fits_nowhere) out += "  nothing fits: the peak at every variable's minimum is over it\n";
  for (size_t i = 0; i < f->tables.size(); ++i) {
    const cap::LimitTable& t = f->tables[i];
    const bool kv = f->kv && i == 0;
    out += fmt::format("  largest {} at each {}{}\n", t.solved, t.pinned,
                       kv ? " (the maximum concurrency; KV tokens = batch x ctx)" : "");
    out += Table(t, f->budget, kv);
  }
  out += Projections(*f);
  out += Kv(*f);
  return out;
}

}  // namespace loadplan::cli

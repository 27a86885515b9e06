// Internal pieces of the plan checker shared by simulator/check/plan_check*.cc.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "simulator/check/plan_check.h"

namespace loadplan::simulator::checkdetail {

struct Ctx {
  const verifier::Manifest& m;
  const LoadPlan& plan;
  std::vector<PlanViolation>& out;

  template <typename... Args>
  void Add(PlanViolationKind k, fmt::format_string<Args...> f, Args&&... args) {
    out.push_back(PlanViolation{k, fmt::format(f, std::forward<Args>(args)...)});
  }
  [[nodiscard]] const std::string& Name(uint32_t buffer) const { return plan.buffers[buffer].name; }
};

inline uint64_t AddSat(uint64_t a, uint64_t b) {
  uint64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}
inline uint64_t RoundUp(uint64_t v, uint64_t to) {
  if (to <= 1 || v % to == 0) return v;
  return AddSat(v / to * to, to);
}

// Where each kind of step sits (step indices), once indices are known valid.
struct StepIndex {
  std::vector<std::vector<uint32_t>> fills, releases;  // per buffer
  std::vector<std::vector<uint32_t>> launches;         // per call
  std::vector<uint32_t> alloc_resident, alloc_arena, free_arena;
};
StepIndex IndexSteps(const LoadPlan& plan);

bool CheckIndices(Ctx& c);
void CheckBuffers(Ctx& c);
void CheckCalls(Ctx& c);
void CheckLayout(Ctx& c);
void CheckSteps(Ctx& c, const StepIndex& s);
void CheckWaits(Ctx& c, const StepIndex& s);

}  // namespace loadplan::simulator::checkdetail

// Internal pieces of the plan checker shared by simulator/check/plan_check*.cc.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/bytes.h"
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
  [[nodiscard]] const std::string& Name(BufferId buffer) const { return plan.buffer(buffer).name; }
};

using base::AddSat;
using base::RoundUp;

// Where each kind of step sits (step positions), once indices are known valid. The checker
// works on plain positions inside; the plan's typed ids are converted where they are read.
struct StepSites {
  std::vector<std::vector<uint32_t>> fills, releases;  // per buffer
  std::vector<std::vector<uint32_t>> launches;         // per call
  std::vector<uint32_t> alloc_resident, alloc_arena, free_arena;
};
StepSites IndexSteps(const LoadPlan& plan);

bool CheckIndices(Ctx& c);
void CheckBuffers(Ctx& c);
void CheckSlices(Ctx& c);  // plan_check_slices.cc
void CheckCalls(Ctx& c);
void CheckLayout(Ctx& c);
void CheckArgs(Ctx& c);
void CheckSteps(Ctx& c, const StepSites& s);
void CheckWaits(Ctx& c, const StepSites& s);

}  // namespace loadplan::simulator::checkdetail

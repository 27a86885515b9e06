// Preflight: bindings and contracts, collected.
#include "backend/preflight.h"

#include "backend/call_args.h"

namespace loadplan::backend {

std::vector<std::string> Preflight(const simulator::LoadPlan& plan, const Checkpoint& checkpoint) {
  std::vector<std::string> out = CheckBindings(plan, checkpoint);
  for (std::string& s : CheckContracts(plan)) out.push_back(std::move(s));
  return out;
}

}  // namespace loadplan::backend

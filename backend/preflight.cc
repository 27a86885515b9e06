// Preflight: bindings and contracts, collected.
#include "backend/preflight.h"

#include "backend/call_args.h"
#include "backend/checkpoint/bindings.h"
#include "base/status_lines.h"

namespace loadplan::backend {

base::Status Preflight(const simulator::LoadPlan& plan, const Checkpoint& checkpoint) {
  std::vector<std::string> out = base::StatusLines(CheckBindings(plan, checkpoint));
  for (std::string& s : base::StatusLines(CheckContracts(plan))) out.push_back(std::move(s));
  return base::StatusFromLines(out);
}

}  // namespace loadplan::backend

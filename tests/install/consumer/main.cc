// A user's program: verify a manifest, plan it, and load a checkpoint when one is given.
//   consumer MANIFEST.json [CHECKPOINT_DIR]
// Exit 0: verified and planned (and loaded); 1: the manifest has errors; 3: the load failed.
#include <cstdio>
#include <string>

#include "api/loadplan.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: consumer MANIFEST.json [CHECKPOINT_DIR]\n");
    return 2;
  }
  namespace api = loadplan::api;
  const loadplan::base::Result<loadplan::verifier::CheckOutput> checked = api::CheckFile(argv[1]);
  if (!checked.ok()) {
    std::fprintf(stderr, "consumer: %s\n", checked.status().message().c_str());
    return 2;
  }
  if (!checked->result.verified) {
    std::fprintf(stderr, "consumer: %zu diagnostics\n", checked->result.diags.size());
    return 1;
  }
  const loadplan::base::Result<loadplan::simulator::LoadPlan> plan =
      api::PlanLoad(*checked->result.verified);
  if (!plan.ok()) {
    std::fprintf(stderr, "consumer: %s\n", plan.status().message().c_str());
    return 4;
  }
  std::printf("planned %s: %zu buffers, %zu steps, resident %llu bytes, arena %llu bytes\n",
              plan->manifest_name.c_str(), plan->buffers.size(), plan->steps.size(),
              static_cast<unsigned long long>(plan->resident_bytes_rounded),
              static_cast<unsigned long long>(plan->arena_bytes_rounded));
  if (argc < 3) return 0;
  loadplan::base::Result<api::LoadedModel> model =
      api::Load(*checked->result.verified, std::string(argv[2]));
  if (!model.ok()) {
    std::fprintf(stderr, "consumer: %s\n", model.status().message().c_str());
    return 3;
  }
  std::printf("loaded %zu tensors, %.2f GB/s\n", model->tensors().size(), model->report().GBps());
  return 0;
}

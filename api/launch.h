// One process per GPU under a launcher (torchrun, mpirun, srun): where this process sits,
// read from the launcher's environment, and the stage of a deployment it loads
// (docs/deploy.md "Running a deployment"). No launcher of our own.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace loadplan::api {

struct LaunchRank {
  uint32_t rank = 0, local_rank = 0, world_size = 1;
  // Which launcher's variables gave them: "torchrun" (RANK, LOCAL_RANK, WORLD_SIZE),
  // "Open MPI" (OMPI_COMM_WORLD_*), "MPICH" (PMI_RANK, PMI_SIZE, MPI_LOCALRANKID), "Slurm"
  // (SLURM_PROCID, SLURM_LOCALID, SLURM_NTASKS); empty: none set (rank 0 of 1).
  std::string launcher;
};

using Getenv = std::function<const char*(const char*)>;

// The first launcher whose rank variable is set, in the order above; its other variables must
// be set too and be integers with rank < world size (kInvalidInput naming the variable otherwise).
[[nodiscard]] base::Result<LaunchRank> RankFromEnvironment(const Getenv& getenv);
[[nodiscard]] base::Result<LaunchRank> RankFromEnvironment();  // this process's environment

struct StageChoice {
  std::string deployment;                    // the deployment's name
  uint32_t stage = 0;                        // = rank
  uint32_t stages = 0;                       // = world size
  std::string manifest;                      // the stage's manifest path, resolved
  int device = 0;                            // = local rank
  std::optional<std::string> device_memory;  // the stage's, else the deployment's default
  LaunchRank rank;
};

// The stage of deployment file `path` that `rank` loads: stage RANK on GPU LOCAL_RANK.
// kInvalidInput when the file does not parse (its diagnostics, with pointers) or when the world
// size is not the number of stages (one process per stage: "torchrun --nproc-per-node 8").
[[nodiscard]] base::Result<StageChoice> ChooseStage(const std::string& path,
                                                    const LaunchRank& rank);
// Stage (or tensor-parallel rank) `rank` of deployment file `path`, named by the caller
// (Python's load(rank=r)), on GPU `device`, whatever runs the other ranks: kOption when the
// deployment has no such stage.
[[nodiscard]] base::Result<StageChoice> ChooseRank(const std::string& path, uint32_t rank,
                                                   int device);

// A readable file whose top level has "stages": a deployment (simulator::LooksLikeDeployment).
// The one test every front end makes (`run`, `plan`, Python's load()).
[[nodiscard]] bool IsDeploymentFile(const std::string& path);

// What a load of `source` reads, as a user names it: a model folder (imported: the folder is
// also the checkpoint), a deployment file (the stage `rank` names on `device`, else the
// launcher's: ChooseRank / ChooseStage), or a manifest file (as it is, on `device`).
struct LoadSource {
  std::string manifest;  // the manifest file to read; empty for a model folder
  // Its text, read while telling it from a deployment (verify this, not the file again); empty
  // for a folder, a deployment's stage or a file that could not be read.
  std::string text;
  std::string folder;  // the model folder to import; empty otherwise
  int device = 0;
  std::optional<StageChoice> stage;  // set for a deployment
};
[[nodiscard]] base::Result<LoadSource> ResolveSource(const std::string& source,
                                                     std::optional<uint32_t> rank, int device);

}  // namespace loadplan::api

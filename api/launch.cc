// RankFromEnvironment and ChooseStage: the launcher's variables, a deployment's stage.
#include "api/launch.h"

#include <algorithm>
#include <filesystem>

#include <charconv>
#include <cstdlib>
#include <string_view>

#include <fmt/format.h>

#include "simulator/deploy/deployment.h"
#include "verifier/manifest_file.h"
#include "verifier/parse.h"

namespace loadplan::api {
namespace {

using base::Result;
using base::Status;

struct LauncherVars {
  const char* name;
  const char* rank;
  const char* local_rank;
  const char* world_size;
};

// In the order tried: a torchrun worker also inherits nothing of MPI's, and mpirun sets no
// RANK, so the first whose rank variable is set is the launcher.
constexpr LauncherVars kLaunchers[] = {
    {"torchrun", "RANK", "LOCAL_RANK", "WORLD_SIZE"},
    {"Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE"},
    {"MPICH", "PMI_RANK", "MPI_LOCALRANKID", "PMI_SIZE"},
    {"Slurm", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS"},
};

Result<uint32_t> Number(const Getenv& getenv, const LauncherVars& l, const char* var) {
  const char* v = getenv(var);
  if (v == nullptr)
    return Status::Error(fmt::format("{} is set ({}) but {} is not", l.rank, l.name, var));
  const std::string_view s(v);
  uint32_t n = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size())
    return Status::Error(fmt::format("{}='{}' ({}) is not a non-negative integer", var, s, l.name));
  return n;
}

}  // namespace

Result<LaunchRank> RankFromEnvironment(const Getenv& getenv) {
  for (const LauncherVars& l : kLaunchers) {
    if (getenv(l.rank) == nullptr) continue;
    const Result<uint32_t> rank = Number(getenv, l, l.rank);
    if (!rank.ok()) return rank.status();
    const Result<uint32_t> local = Number(getenv, l, l.local_rank);
    if (!local.ok()) return local.status();
    const Result<uint32_t> world = Number(getenv, l, l.world_size);
    if (!world.ok()) return world.status();
    if (*world == 0 || *rank >= *world) {
      return Status::Error(fmt::format("{}={} is not below {}={} ({})", l.rank, *rank, l.world_size,
                                       *world, l.name));
    }
    return LaunchRank{
        .rank = *rank, .local_rank = *local, .world_size = *world, .launcher = l.name};
  }
  return LaunchRank{};
}

Result<LaunchRank> RankFromEnvironment() {
  return RankFromEnvironment([](const char* name) { return std::getenv(name); });
}

namespace {

// Deployment file `path`'s `text`, parsed (kInvalidInput with its diagnostics when it does not).
Result<simulator::Deployment> DeploymentOf(const std::string& text, const std::string& path) {
  simulator::DeploymentParse parsed = simulator::ParseDeployment(text, path);
  if (!parsed.deployment) {
    std::string why;
    for (const verifier::Diagnostic& d : parsed.diags)
      why += fmt::format("{}{} {}: {}", why.empty() ? "" : "; ", d.code, d.pointer, d.message);
    return Status::Error(fmt::format("{}: {}", path, why));
  }
  return std::move(*parsed.deployment);
}

Result<simulator::Deployment> DeploymentAt(const std::string& path) {
  const Result<std::string> text =
      verifier::ReadManifestFile(path, verifier::ParseLimits{}.max_bytes);
  if (!text.ok()) return text.status();
  return DeploymentOf(*text, path);
}

StageChoice StageOf(const simulator::Deployment& d, const LaunchRank& rank) {
  const simulator::DeploymentStage& s = d.stages[rank.rank];
  return StageChoice{.deployment = d.name,
                     .stage = rank.rank,
                     .stages = static_cast<uint32_t>(d.stages.size()),
                     .manifest = s.path,
                     .device = static_cast<int>(rank.local_rank),
                     .device_memory = s.device_memory ? s.device_memory : d.device_memory,
                     .rank = rank};
}

// The stage the launcher's `rank` loads of deployment `d` (read from `path`).
Result<StageChoice> LaunchedStage(const Result<simulator::Deployment>& d, const std::string& path,
                                  const LaunchRank& rank) {
  if (!d.ok()) return d.status();
  if (rank.world_size != d->stages.size()) {
    return Status::Error(fmt::format(
        "{}: deployment {} has {} stages, but {} started ({}): start one process per stage "
        "(torchrun --nproc-per-node {}, or mpirun -np {})",
        path, d->name, d->stages.size(),
        rank.world_size == 1 ? std::string("1 process was")
                             : fmt::format("{} processes were", rank.world_size),
        rank.launcher.empty() ? "no launcher: 1" : fmt::format("{}'s world size", rank.launcher),
        d->stages.size(), d->stages.size()));
  }
  return StageOf(*d, rank);
}

// Stage `rank` of deployment `d` (read from `path`), named by the caller, on `device`.
Result<StageChoice> NamedStage(const Result<simulator::Deployment>& d, const std::string& path,
                               uint32_t rank, int device) {
  if (!d.ok()) return d.status();
  if (rank >= d->stages.size()) {
    return Status::Error(
        fmt::format("rank (rank=) {} is not a stage of deployment {} ({}): it has {} (0 to {})",
                    rank, d->name, path, d->stages.size(), d->stages.size() - 1),
        base::ErrorKind::kOption);
  }
  return StageOf(*d, LaunchRank{.rank = rank,
                                .local_rank = static_cast<uint32_t>(std::max(device, 0)),
                                .world_size = static_cast<uint32_t>(d->stages.size()),
                                .launcher = "explicit"});
}

}  // namespace

Result<StageChoice> ChooseStage(const std::string& path, const LaunchRank& rank) {
  return LaunchedStage(DeploymentAt(path), path, rank);
}

Result<StageChoice> ChooseRank(const std::string& path, uint32_t rank, int device) {
  return NamedStage(DeploymentAt(path), path, rank, device);
}

bool IsDeploymentFile(const std::string& path) {
  if (path.empty()) return false;
  const Result<std::string> text =
      verifier::ReadManifestFile(path, verifier::ParseLimits{}.max_bytes);
  return text.ok() && simulator::LooksLikeDeployment(*text);
}

Result<LoadSource> ResolveSource(const std::string& source, std::optional<uint32_t> rank,
                                 int device) {
  std::error_code ec;
  if (std::filesystem::is_directory(source, ec)) {
    if (rank) {
      return Status::Error(fmt::format("rank (rank=) {}: {} is a model folder, not a deployment "
                                       "file; rank= picks a stage or tensor-parallel rank of one",
                                       *rank, source),
                           base::ErrorKind::kOption);
    }
    return LoadSource{.folder = source, .device = device};
  }
  // Read once: a manifest's text goes to the caller, which verifies it without reading again.
  Result<std::string> text = verifier::ReadManifestFile(source, verifier::ParseLimits{}.max_bytes);
  if (!text.ok() || !simulator::LooksLikeDeployment(*text)) {
    if (rank) {
      return Status::Error(fmt::format("rank (rank=) {}: {} is a manifest, not a deployment "
                                       "file; rank= picks a stage or tensor-parallel rank of one",
                                       *rank, source),
                           base::ErrorKind::kOption);
    }
    // Unreadable: the caller reads it again and says why in its own words.
    return LoadSource{
        .manifest = source, .text = text.ok() ? std::move(*text) : std::string(), .device = device};
  }
  const Result<simulator::Deployment> d = DeploymentOf(*text, source);  // the text read above
  Result<StageChoice> stage = [&]() -> Result<StageChoice> {
    if (rank) return NamedStage(d, source, *rank, device);
    const Result<LaunchRank> launched = RankFromEnvironment();
    if (!launched.ok()) return launched.status();
    return LaunchedStage(d, source, *launched);
  }();
  if (!stage.ok()) return stage.status();
  return LoadSource{.manifest = stage->manifest, .device = stage->device, .stage = *stage};
}

}  // namespace loadplan::api

// CheckBindings and LocateFill: a plan's `tensor` and `tensors` bindings against a checkpoint.
#include "backend/checkpoint/bindings.h"

#include <string>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/bytes.h"
#include "base/status_lines.h"
#include "verifier/diag.h"

namespace loadplan::backend {
namespace {

// The shape a sliced buffer has: its tensor's, with the slice's length at its dimension.
std::vector<uint64_t> SlicedShape(std::vector<uint64_t> tensor, const verifier::TensorSlice& s) {
  if (s.dim < tensor.size()) tensor[s.dim] = s.length;
  return tensor;
}

// The runs of `b`'s slice in the tensor at `loc`, with the tensor's other dimensions equal
// to the buffer's. Else the problem, worded after "{where}: tensor {name} ".
base::Result<base::SliceRuns> SliceRunsOf(const simulator::PlannedBuffer& b,
                                          const Checkpoint::Located& loc) {
  const verifier::TensorSlice& s = *b.slice;
  const std::vector<uint64_t> have(loc.info->shape.begin(), loc.info->shape.end());
  base::Result<base::SliceRuns> runs = base::RunsOfSlice(have, b.dtype, s.dim, s.start, s.length);
  if (!runs.ok()) {
    return base::Status::Error(fmt::format("of shape [{}] in {}: {}", fmt::join(have, ", "),
                                           loc.file->path(), runs.status().message()));
  }
  if (s.extent && have[s.dim] != *s.extent) {  // RunsOfSlice checked dim
    return base::Status::Error(fmt::format(
        "has shape [{}] in {}: {} along dimension {}, the manifest's slice says extent {}",
        fmt::join(have, ", "), loc.file->path(), have[s.dim], s.dim, *s.extent));
  }
  if (!b.shape || *b.shape != SlicedShape(have, s)) {
    return base::Status::Error(fmt::format(
        "has shape [{}] in {}: its slice [{}, {}) of dimension {} has shape [{}], the manifest "
        "says [{}]",
        fmt::join(have, ", "), loc.file->path(), s.start, s.start + s.length, s.dim,
        fmt::join(SlicedShape(have, s), ", "),
        b.shape ? fmt::format("{}", fmt::join(*b.shape, ", ")) : "variable"));
  }
  return runs;
}

// A `tensor` binding: present, of the buffer's dtype and shape (or, sliced, the slice inside
// it with the buffer's shape).
void CheckTensor(const simulator::PlannedBuffer& b, const std::string& where,
                 const Checkpoint& ckpt, std::vector<std::string>& errors) {
  const Checkpoint::Located loc = ckpt.Find(*b.tensor);
  if (!loc.info) {
    errors.push_back(fmt::format("{}: tensor {} is not in the checkpoint", where, *b.tensor));
    return;
  }
  if (loc.info->dtype != b.dtype) {
    errors.push_back(fmt::format("{}: tensor {} has dtype {} in {}, the manifest says {}", where,
                                 *b.tensor, base::DtypeName(loc.info->dtype), loc.file->path(),
                                 base::DtypeName(b.dtype)));
  }
  if (b.slice) {
    const base::Result<base::SliceRuns> runs = SliceRunsOf(b, loc);
    if (!runs.ok())
      errors.push_back(fmt::format("{}: tensor {} {}", where, *b.tensor, runs.status().message()));
    return;
  }
  const std::vector<uint64_t> have(loc.info->shape.begin(), loc.info->shape.end());
  if (!b.shape || *b.shape != have) {
    errors.push_back(
        fmt::format("{}: tensor {} has shape [{}] in {}, the manifest says [{}]", where, *b.tensor,
                    fmt::join(have, ", "), loc.file->path(),
                    b.shape ? fmt::format("{}", fmt::join(*b.shape, ", ")) : "variable"));
  }
}

// A `tensors` binding: each present and of the buffer's dtype (any shape: the read is of
// whole tensors, one after another), their bytes summing to the buffer's.
void CheckTensorList(const simulator::PlannedBuffer& b, const std::string& where,
                     const Checkpoint& ckpt, std::vector<std::string>& errors) {
  uint64_t sum = 0;
  bool all_found = true;
  for (const std::string& t : *b.tensors) {
    const Checkpoint::Located loc = ckpt.Find(t);
    if (!loc.info) {
      errors.push_back(fmt::format("{}: listed tensor {} is not in the checkpoint", where, t));
      all_found = false;
      continue;
    }
    if (loc.info->dtype != b.dtype) {
      errors.push_back(fmt::format("{}: listed tensor {} has dtype {} in {}, the manifest says {}",
                                   where, t, base::DtypeName(loc.info->dtype), loc.file->path(),
                                   base::DtypeName(b.dtype)));
    }
    sum = base::AddSat(sum, loc.info->bytes());
  }
  if (all_found && sum != b.bytes) {
    errors.push_back(fmt::format("{}: its {} listed tensors hold {} bytes together, the buffer {}",
                                 where, b.tensors->size(), sum, b.bytes));
  }
}

}  // namespace

base::Status CheckBindings(const simulator::LoadPlan& plan, const Checkpoint& ckpt) {
  std::vector<std::string> errors;
  for (const simulator::PlannedBuffer& b : plan.buffers) {
    if (!b.tensor && !b.tensors) continue;
    const auto where =
        fmt::format("buffer {} (/buffers/{})", b.name, verifier::EscapePointerToken(b.name));
    if (b.tensor) CheckTensor(b, where, ckpt, errors);
    if (b.tensors) CheckTensorList(b, where, ckpt, errors);
  }
  return base::StatusFromLines(errors);
}

base::Result<std::vector<FillPart>> LocateFill(const simulator::PlannedBuffer& b,
                                               const Checkpoint& ckpt) {
  const std::vector<std::string_view> names = simulator::BoundTensors(b);
  if (names.empty()) return base::Status::Error("it binds no checkpoint tensor");
  std::vector<FillPart> out;
  uint64_t sum = 0;
  for (std::string_view t : names) {
    const Checkpoint::Located loc = ckpt.Find(t);
    if (!loc.info || !loc.file)
      return base::Status::Error(fmt::format("tensor {} is not in the checkpoint", t));
    if (loc.info->dtype != b.dtype) {
      return base::Status::Error(fmt::format("tensor {} has dtype {} in {}, the buffer {}", t,
                                             base::DtypeName(loc.info->dtype), loc.file->path(),
                                             base::DtypeName(b.dtype)));
    }
    FillPart part{.at = loc, .runs = {.run_bytes = loc.info->bytes(), .count = 1}};
    if (b.slice) {
      base::Result<base::SliceRuns> runs = SliceRunsOf(b, loc);
      if (!runs.ok())
        return base::Status::Error(fmt::format("tensor {} {}", t, runs.status().message()));
      part.runs = *runs;
    }
    sum = base::AddSat(sum, part.runs.bytes());
    out.push_back(part);
  }
  if (sum == b.bytes) return out;
  if (names.size() == 1) {
    return base::Status::Error(
        fmt::format("tensor {} has {} bytes{} in {}, the plan's buffer has {}", names[0], sum,
                    b.slice ? " in its slice" : "", out[0].at.file->path(), b.bytes));
  }
  return base::Status::Error(
      fmt::format("its {} tensors ({} ... {}) hold {} bytes together, the "
                  "plan's buffer has {}",
                  names.size(), names.front(), names.back(), sum, b.bytes));
}

}  // namespace loadplan::backend

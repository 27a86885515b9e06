// A checkpoint: one safetensors file or a sharded set (model.safetensors.index.json
// with its weight_map), and the check of a manifest's `tensor` bindings against it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend/checkpoint/safetensors.h"
#include "base/status.h"
#include "simulator/plan.h"

namespace loadplan::backend {

class Checkpoint {
 public:
  // `path`: a .safetensors file, a model.safetensors.index.json, or a directory
  // holding either (the index wins; else the directory's only *.safetensors file).
  // kIo when a file cannot be read, kInvalidInput when the bytes or the index are wrong.
  static base::Result<std::unique_ptr<Checkpoint>> Open(const std::string& path);

  struct Located {
    const SafetensorsFile* file = nullptr;
    const TensorInfo* info = nullptr;
  };
  // nullptr fields when absent.
  [[nodiscard]] Located Find(std::string_view tensor) const;
  [[nodiscard]] const std::vector<SafetensorsFile>& files() const { return files_; }
  // Every tensor, sorted by name (bytewise).
  [[nodiscard]] std::vector<Located> ByName() const;
  [[nodiscard]] uint64_t TotalBytes() const;
  // The first file that changed since Open (SafetensorsFile::CheckUnchanged), in files()
  // order; ok when none did. O(files) stat calls.
  [[nodiscard]] base::Status CheckUnchanged() const;

 private:
  struct Ref {
    uint32_t file = 0;    // files_ index
    uint32_t tensor = 0;  // its tensors() index
  };
  [[nodiscard]] const std::string& Name(Ref r) const;
  [[nodiscard]] Located At(Ref r) const;

  std::vector<SafetensorsFile> files_;
  std::vector<Ref> by_name_;  // every tensor, sorted by name (each name once)
};

// Every `tensor` binding of the plan against the checkpoint: missing tensors, dtype and shape
// mismatches, all reported at once ("buffer l0.q (/buffers/l0.q): tensor
// model.layers.0.q.weight has dtype F16 in shard-1.safetensors, the manifest says BF16").
// Shapes of bound buffers are variable-free (rule K5), so the plan holds them exactly.
// Ok, or one kInvalidInput status listing every problem, one per line, in buffer order.
[[nodiscard]] base::Status CheckBindings(const simulator::LoadPlan& plan, const Checkpoint& ckpt);

}  // namespace loadplan::backend

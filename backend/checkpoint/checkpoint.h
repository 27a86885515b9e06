// A checkpoint: one safetensors file or a sharded set (model.safetensors.index.json
// with its weight_map). The check of a plan's bindings against it is in bindings.h.
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

}  // namespace loadplan::backend

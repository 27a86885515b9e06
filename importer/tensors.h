// The tensors of a Hugging Face model folder, from the safetensors headers only (the data is
// never read): name, dtype, shape and the shard that holds each.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/dtype.h"
#include "base/status.h"

namespace loadplan::importer {

struct Tensor {
  std::string name;
  base::Dtype dtype = base::Dtype::kU8;
  std::vector<int64_t> shape;
  std::string file;  // the shard's file name (no directory)
};

class TensorTable {
 public:
  // `dir` holds model.safetensors.index.json and its shards, or one .safetensors file. The
  // checkpoint's own checks apply (backend/checkpoint/checkpoint.h): a shard missing or not
  // safetensors, a tensor in two shards, an index that points at the wrong shard.
  static base::Result<TensorTable> Open(const std::string& dir);
  explicit TensorTable(std::vector<Tensor> tensors, size_t files = 1);

  [[nodiscard]] const std::vector<Tensor>& all() const { return tensors_; }  // sorted by name
  [[nodiscard]] const Tensor* Find(std::string_view name) const;
  [[nodiscard]] size_t files() const { return files_; }

 private:
  std::vector<Tensor> tensors_;
  size_t files_ = 0;
};

// "model.layers.12.mlp.gate.weight" -> {12, "mlp.gate.weight"}; nullopt for other names.
std::optional<std::pair<int64_t, std::string_view>> SplitLayer(std::string_view name);

// "[4096, 14336]"
std::string ShapeText(const std::vector<int64_t>& shape);

}  // namespace loadplan::importer

// TensorTable from a checkpoint folder's headers.
#include "importer/tensors.h"

#include <algorithm>
#include <charconv>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backend/checkpoint/checkpoint.h"

namespace loadplan::importer {

base::Result<TensorTable> TensorTable::Open(const std::string& dir) {
  base::Result<std::unique_ptr<backend::Checkpoint>> ckpt = backend::Checkpoint::Open(dir);
  if (!ckpt.ok()) return ckpt.status();
  std::vector<std::string> names;  // each shard's file name, once
  for (const backend::SafetensorsFile& f : (*ckpt)->files())
    names.push_back(std::filesystem::path(f.path()).filename().string());
  std::vector<Tensor> tensors;
  const std::vector<backend::Checkpoint::Located> sorted = (*ckpt)->ByName();
  tensors.reserve(sorted.size());
  for (const backend::Checkpoint::Located& at : sorted) {
    Tensor out{.name = at.info->name,
               .dtype = at.info->dtype,
               .file = names[static_cast<size_t>(at.file - (*ckpt)->files().data())]};
    out.shape.assign(at.info->shape.begin(), at.info->shape.end());
    tensors.push_back(std::move(out));
  }
  return TensorTable(std::move(tensors), (*ckpt)->files().size());
}

TensorTable::TensorTable(std::vector<Tensor> tensors, size_t files)
    : tensors_(std::move(tensors)), files_(files) {
  const auto less = [](const Tensor& a, const Tensor& b) { return a.name < b.name; };
  if (!std::is_sorted(tensors_.begin(), tensors_.end(), less))
    std::sort(tensors_.begin(), tensors_.end(), less);
}

const Tensor* TensorTable::Find(std::string_view name) const {
  const auto it = std::lower_bound(tensors_.begin(), tensors_.end(), name,
                                   [](const Tensor& t, std::string_view n) { return t.name < n; });
  return it != tensors_.end() && it->name == name ? &*it : nullptr;
}

std::optional<std::pair<int64_t, std::string_view>> SplitLayer(std::string_view name) {
  constexpr std::string_view kPrefix = "model.layers.";
  if (!name.starts_with(kPrefix)) return std::nullopt;
  name.remove_prefix(kPrefix.size());
  int64_t layer = -1;
  if (name.empty() || name.front() < '0' || name.front() > '9') return std::nullopt;  // no sign
  const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), layer);
  if (ec != std::errc() || end == name.data() || end == name.data() + name.size() || *end != '.')
    return std::nullopt;
  return std::pair{layer, name.substr(static_cast<size_t>(end - name.data()) + 1)};
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

}  // namespace loadplan::importer

// import_model(): `loadplan import` for Python (importer/import.h): a Hugging Face model folder
// -> manifest text and the import's summary. The GIL is released while headers are read.
#include <optional>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "importer/import.h"
#include "importer/tensor_parallel.h"
#include "python/src/bindings.h"

namespace loadplan::python {
namespace {

nb::dict Summary(const importer::ImportResult& r, std::string text) {
  nb::dict d;
  d["manifest"] = std::move(text);
  d["name"] = r.manifest.name;
  d["model_type"] = r.model_type;
  d["recipe"] = std::string(importer::RecipeName(r.recipe));
  d["tensors"] = r.tensors;
  d["shards"] = r.shards;
  d["weights"] = r.weights;
  d["sources"] = r.sources;
  d["carries"] = r.carries;
  d["kv_layers"] = r.kv_layers;
  d["kv_bytes_per_token"] = r.kv_bytes_per_token;
  d["layout"] = std::string(importer::LayoutName(r.layout));
  d["state_layers"] = r.state_layers;
  d["stacks"] = r.stacks;
  d["state_bytes_per_sequence"] = r.state_bytes_per_sequence;
  nb::list notes, warnings;
  for (const std::string& n : r.notes) notes.append(n);
  for (const std::string& w : r.warnings) warnings.append(w);
  d["notes"] = notes;
  d["warnings"] = warnings;
  return d;
}

// The import options as `loadplan import` takes them, or an OptionError.
importer::ImportOptions OptionsOf(const std::string& recipe, const std::string& kv_dtype,
                                  std::optional<int64_t> max_batch, std::optional<int64_t> max_ctx,
                                  const std::string& name, const std::string& layout, bool strict,
                                  std::optional<int64_t> kv_bytes_per_token) {
  const std::optional<importer::Recipe> r = importer::ParseRecipe(recipe);
  if (!r) {
    RaiseStatus(base::Status::Error(fmt::format("recipe '{}' is not one of: {}", recipe,
                                                fmt::join(importer::RecipeNames(), ", "))),
                "options");
  }
  const std::optional<base::Dtype> kv = base::ParseDtype(kv_dtype);
  if (!kv)
    RaiseStatus(base::Status::Error(fmt::format("kv_dtype '{}' is not a dtype", kv_dtype)),
                "options");
  const std::optional<importer::Layout> l = importer::ParseLayout(layout);
  if (!l) {
    RaiseStatus(base::Status::Error(
                    fmt::format("layout '{}' is not one of: checkpoint, transformers", layout)),
                "options");
  }
  return {.recipe = *r,
          .kv_dtype = *kv,
          .max_batch = max_batch,
          .max_ctx = max_ctx,
          .name = name,
          .strict = strict,
          .layout = *l,
          .kv_bytes_per_token = kv_bytes_per_token};
}

nb::dict ImportModel(const std::string& dir, const std::string& recipe, const std::string& kv_dtype,
                     std::optional<int64_t> max_batch, std::optional<int64_t> max_ctx,
                     const std::string& name, const std::string& layout, bool strict,
                     std::optional<int64_t> kv_bytes_per_token) {
  const importer::ImportOptions o =
      OptionsOf(recipe, kv_dtype, max_batch, max_ctx, name, layout, strict, kv_bytes_per_token);
  std::optional<base::Result<importer::ImportResult>> result;
  std::string text;
  {
    nb::gil_scoped_release release;
    result.emplace(importer::ImportModel(dir, o));
    if (result->ok()) text = std::move((*result)->text);
  }
  if (!result->ok()) RaiseStatus(result->status(), "import");
  return Summary(**result, std::move(text));
}

// `loadplan import --tensor-parallel T --expert-parallel E`: the full import's summary, each
// rank's manifest text and figures, and deploy.json's text (importer/tensor_parallel.h).
nb::dict ImportParallel(const std::string& dir, int64_t tp, int64_t ep, const std::string& recipe,
                        const std::string& kv_dtype, std::optional<int64_t> max_batch,
                        std::optional<int64_t> max_ctx, const std::string& name,
                        const std::string& layout, bool strict,
                        std::optional<int64_t> kv_bytes_per_token) {
  const importer::ImportOptions o =
      OptionsOf(recipe, kv_dtype, max_batch, max_ctx, name, layout, strict, kv_bytes_per_token);
  std::optional<base::Result<importer::TensorParallelImport>> result;
  {
    nb::gil_scoped_release release;
    result.emplace(importer::ImportTensorParallel(dir, tp, o, ep));
  }
  if (!result->ok()) RaiseStatus(result->status(), "import");
  importer::TensorParallelImport& r = **result;
  nb::dict d = Summary(r.full, r.full.text);
  nb::list ranks;
  for (size_t k = 0; k < r.ranks.size(); ++k) {
    nb::dict x;
    x["file"] = importer::RankFileName(k);
    x["manifest"] = r.texts[k];
    x["name"] = r.ranks[k].manifest.name;
    x["bytes_read"] = r.ranks[k].bytes_read;
    x["replicated"] = r.ranks[k].replicated;
    x["experts"] = r.ranks[k].experts;
    ranks.append(x);
  }
  d["ranks"] = ranks;
  d["deployment"] = r.deployment;
  return d;
}

}  // namespace

void BindImport(nb::module_& m) {
  m.def("import_parallel", &ImportParallel, nb::arg("dir"), nb::arg("tensor_parallel"),
        nb::arg("expert_parallel"), nb::arg("recipe"), nb::arg("kv_dtype"),
        nb::arg("max_batch").none(), nb::arg("max_ctx").none(), nb::arg("name"), nb::arg("layout"),
        nb::arg("strict"), nb::arg("kv_bytes_per_token").none(),
        "A model folder -> tensor/expert-parallel ranks and deploy.json's text "
        "(importer/tensor_parallel.h).");
  m.def("import_model", &ImportModel, nb::arg("dir"), nb::arg("recipe"), nb::arg("kv_dtype"),
        nb::arg("max_batch").none(), nb::arg("max_ctx").none(), nb::arg("name"), nb::arg("layout"),
        nb::arg("strict"), nb::arg("kv_bytes_per_token").none(),
        "A Hugging Face model folder -> {manifest: text, ...summary} (importer/import.h).");
}

}  // namespace loadplan::python

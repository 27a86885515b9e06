// loadplan._loadplan.Model: the names, metadata and zero-copy DLPack views of a loaded model's
// tensors, and its load report. python/loadplan/_model.py wraps it as a Mapping.
#include <optional>
#include <string>
#include <vector>

#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "python/src/bindings.h"
#include "python/src/model.h"

namespace loadplan::python {
namespace {

using Array = nb::ndarray<nb::array_api>;
namespace dl = nb::dlpack;

// The DLPack dtype of a tensor's elements; nullopt for dtypes exported as raw bytes (uint8):
// FP4/FP6 pack several elements per byte, and frameworks disagree on the FP8 codes.
std::optional<dl::dtype> DlpackOf(base::Dtype d) {
  using base::Dtype;
  auto of = [](dl::dtype_code c, uint8_t bits) { return dl::dtype{uint8_t(c), bits, 1}; };
  switch (d) {
    case Dtype::kBool: return of(dl::dtype_code::Bool, 8);
    case Dtype::kU8: return of(dl::dtype_code::UInt, 8);
    case Dtype::kI8: return of(dl::dtype_code::Int, 8);
    case Dtype::kI16: return of(dl::dtype_code::Int, 16);
    case Dtype::kU16: return of(dl::dtype_code::UInt, 16);
    case Dtype::kF16: return of(dl::dtype_code::Float, 16);
    case Dtype::kBF16: return of(dl::dtype_code::Bfloat, 16);
    case Dtype::kI32: return of(dl::dtype_code::Int, 32);
    case Dtype::kU32: return of(dl::dtype_code::UInt, 32);
    case Dtype::kF32: return of(dl::dtype_code::Float, 32);
    case Dtype::kC64: return of(dl::dtype_code::Complex, 64);
    case Dtype::kF64: return of(dl::dtype_code::Float, 64);
    case Dtype::kI64: return of(dl::dtype_code::Int, 64);
    case Dtype::kU64: return of(dl::dtype_code::UInt, 64);
    default: return std::nullopt;
  }
}

const api::LoadedTensor& Get(const PyModel& m, const std::string& name) {
  const api::LoadedTensor* t = m.model.Find(name);
  if (!t) throw nb::key_error(name.c_str());
  return *t;
}

// A view of the tensor's device memory whose owner is the Python Model object.
Array Tensor(nb::pointer_and_handle<PyModel> self, const std::string& name) {
  const api::LoadedTensor& t = Get(*self.p, name);
  const std::optional<dl::dtype> typed = DlpackOf(t.dtype);
  std::vector<size_t> shape(t.shape.begin(), t.shape.end());        // [] for a scalar
  if (!typed || !t.shaped) shape = {static_cast<size_t>(t.bytes)};  // raw bytes
  const dl::dtype dtype = typed && t.shaped ? *typed : nb::dtype<uint8_t>();
  return Array(t.data, shape.size(), shape.data(), self.h, nullptr, dtype, nb::device::cuda::value,
               self.p->model.device());
}

nb::dict Info(const PyModel& m, const std::string& name) {
  const api::LoadedTensor& t = Get(m, name);
  nb::dict d;
  d["name"] = t.name;
  d["kind"] = std::string(verifier::BufferKindName(t.kind));
  d["exported"] = t.exported;
  d["dtype"] = std::string(base::DtypeName(t.dtype));
  d["shape"] = nb::cast(t.shape);
  d["bytes"] = t.bytes;
  d["id"] = simulator::Index(t.id);
  return d;
}

nb::dict Report(const PyModel& m) {
  const api::LoadReport& r = m.model.report();
  nb::dict d;
  d["predicted_peak"] = r.predicted_peak;
  d["resident_bytes"] = r.resident_bytes;
  d["fill_bytes"] = r.fill_bytes;
  d["file_bytes"] = r.times.file_bytes;  // a slice read as a span reads more than it fills
  d["slices_as_runs"] = r.times.slices_as_runs;
  d["slices_as_span"] = r.times.slices_as_span;
  d["slices_as_map"] = r.times.slices_as_map;
  d["gbps"] = r.GBps();
  d["wall_s"] = r.times.wall_s;
  d["measured_peak"] = r.memory.peak_allocated;         // the backend's allocations at their most
  d["measured_used_delta"] = r.memory.peak_used_delta;  // cudaMemGetInfo's drop at its most
  return d;
}

std::vector<std::string> Names(const PyModel& m) {
  std::vector<std::string> out;
  for (const api::LoadedTensor& t : m.model.tensors()) out.push_back(t.name);
  return out;
}

}  // namespace

void BindModel(nb::module_& m) {
  nb::class_<PyModel>(m, "Model", "A loaded model: owns its device memory (the resident pool).")
      .def("names", &Names, "Every resident buffer's name, in plan order.")
      .def("__len__", [](const PyModel& p) { return p.model.tensors().size(); })
      .def(
          "__contains__",
          [](const PyModel& p, const std::string& n) { return p.model.Find(n) != nullptr; },
          nb::arg("name"))
      .def("tensor", &Tensor, nb::arg("name"),
           "A zero-copy DLPack view (__dlpack__, __dlpack_device__) that keeps the model alive.")
      .def("info", &Info, nb::arg("name"), "name, kind, exported, dtype, shape, bytes, id.")
      .def("report", &Report, "The load's predicted peak, resident and read bytes, GB/s.")
      .def_prop_ro("device", [](const PyModel& p) { return p.model.device(); })
      .def_prop_ro("device_bytes", [](const PyModel& p) { return p.model.device_bytes(); });
}

}  // namespace loadplan::python

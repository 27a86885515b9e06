// Manifest model helpers: enum names, lookups, sizes as expressions, pointer assignment.
#include "verifier/manifest.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <iterator>
#include <string>
#include <utility>

#include "base/bytes.h"
#include "verifier/diag.h"
#include "verifier/sort_by_name.h"

namespace loadplan::verifier {
namespace {

constexpr std::array<std::string_view, 8> kKindNames = {"weight",  "source", "carry",  "state",
                                                        "scratch", "input",  "output", "peer"};

template <typename T>
const T* FindByName(const std::vector<T>& v, std::string_view n) {
  auto it = std::lower_bound(v.begin(), v.end(), n, [](const T& x, std::string_view key) {
    return std::string_view(x.name) < key;
  });
  return it != v.end() && it->name == n ? &*it : nullptr;
}

// out = parent + "/" + escaped token, reusing out's storage (pointers are set
// twice while parsing: the second time costs no allocation).
void SetChild(std::string& out, std::string_view parent, std::string_view token) {
  out.clear();
  out.reserve(parent.size() + 1 + token.size());  // one allocation unless the token needs escapes
  out.append(parent);
  out.push_back('/');
  AppendEscaped(out, token);
}

void SetChild(std::string& out, std::string_view parent, size_t index) {
  char digits[24];
  char* end = std::to_chars(std::begin(digits), std::end(digits), index).ptr;
  SetChild(out, parent, std::string_view(digits, static_cast<size_t>(end - digits)));
}

// a*b folded to a constant when both are constants and the product fits in int64.
Expr Times(Expr a, Expr b) {
  int64_t p = 0;
  if (a.IsConst() && b.IsConst() && !__builtin_mul_overflow(a.value, b.value, &p))
    return Expr::Const(p);
  if (a.IsConst() && a.value == 1) return b;
  if (b.IsConst() && b.value == 1) return a;
  return Expr::Binary(ExprOp::kMul, std::move(a), std::move(b));
}

}  // namespace

std::optional<BufferKind> ParseBufferKind(std::string_view s) {
  for (size_t i = 0; i < kKindNames.size(); ++i) {
    if (kKindNames[i] == s) return static_cast<BufferKind>(i);
  }
  return std::nullopt;
}

std::string_view BufferKindName(BufferKind k) {
  size_t i = static_cast<size_t>(k);
  return i < kKindNames.size() ? kKindNames[i] : std::string_view("?");
}

const Variable* Manifest::FindVar(std::string_view n) const { return FindByName(vars, n); }
const Buffer* Manifest::FindBuffer(std::string_view n) const { return FindByName(buffers, n); }
const Kernel* Manifest::FindKernel(std::string_view n) const { return FindByName(kernels, n); }
const Program* Manifest::FindProgram(std::string_view n) const { return FindByName(programs, n); }

Box Manifest::VarBox() const {
  Box box;
  for (const Variable& v : vars) box[v.name] = Range{v.min, v.max};
  return box;
}

std::vector<std::string_view> BoundTensors(const Buffer& b) {
  std::vector<std::string_view> out;
  if (b.tensor) out.emplace_back(*b.tensor);
  if (b.tensors) out.insert(out.end(), b.tensors->begin(), b.tensors->end());
  return out;
}

const Param* FindParam(const Kernel& k, std::string_view n) { return FindByName(k.params, n); }

const Arg* FindArg(const Call& c, std::string_view param) {
  auto it = std::lower_bound(
      c.args.begin(), c.args.end(), param,
      [](const Arg& a, std::string_view key) { return std::string_view(a.param) < key; });
  return it != c.args.end() && it->param == param ? &*it : nullptr;
}

Expr ElementCount(const Buffer& b) {
  Expr count = Expr::Const(1);
  for (const Expr& dim : b.shape) count = Times(std::move(count), dim);
  return count;
}

Expr ByteSize(const Buffer& b) {
  Expr elements = ElementCount(b);
  uint32_t bits = base::DtypeBits(b.dtype);
  if (bits % 8 == 0) return Times(std::move(elements), Expr::Const(bits / 8));
  Expr total_bits = Times(std::move(elements), Expr::Const(bits));
  if (total_bits.IsConst() && total_bits.value >= 0)
    return Expr::Const(total_bits.value / 8 + (total_bits.value % 8 != 0));
  return Expr::Binary(ExprOp::kCeilDiv, std::move(total_bits), Expr::Const(8));
}

std::optional<uint64_t> ExtentBytes(const Param& p, const Assignment& scalars) {
  if (!p.extent || !p.dtype) return std::nullopt;
  const std::optional<int64_t> v = ValueAt(*p.extent, scalars);
  if (!v || *v < 0) return std::nullopt;
  return base::ElementBytes(static_cast<uint64_t>(*v), *p.dtype);
}

namespace {

template <typename T>
bool SortedByName(const std::vector<T>& v) {
  return std::is_sorted(v.begin(), v.end(), [](const T& a, const T& b) { return a.name < b.name; });
}

bool ArgLess(const Arg& a, const Arg& b) { return a.param < b.param; }

}  // namespace

bool IsSortedModel(const Manifest& m) {
  bool nested = true;
  for (const Kernel& k : m.kernels) nested = nested && SortedByName(k.params);
  for (const Program& p : m.programs) {
    for (const Call& c : p.calls)
      nested = nested && std::is_sorted(c.args.begin(), c.args.end(), ArgLess);
  }
  return nested && SortedByName(m.vars) && SortedByName(m.buffers) && SortedByName(m.kernels) &&
         SortedByName(m.programs);
}

void SortModel(Manifest& m) {
  SortByName(m.vars);
  SortByName(m.buffers);
  SortByName(m.kernels);
  SortByName(m.programs);
  for (Kernel& k : m.kernels) SortByName(k.params);
  for (Program& p : m.programs) {
    for (Call& c : p.calls) {
      if (!std::is_sorted(c.args.begin(), c.args.end(), ArgLess))
        std::stable_sort(c.args.begin(), c.args.end(), ArgLess);
    }
  }
}

const Manifest& InNameOrder(const Manifest& m, std::optional<Manifest>& copy) {
  if (IsSortedModel(m)) return m;
  copy = m;
  SortModel(*copy);
  return *copy;
}

void AssignPointers(Manifest& m) {
  SortModel(m);
  for (Variable& v : m.vars) SetChild(v.ptr, "/vars", v.name);
  m.load.ptr = (m.load.lanes == 1 && m.load.prefetch == 0) ? "" : "/load";
  for (Buffer& b : m.buffers) SetChild(b.ptr, "/buffers", b.name);
  std::string scratch;
  for (Kernel& k : m.kernels) {
    SetChild(k.ptr, "/kernels", k.name);
    SetChild(scratch, k.ptr, "params");
    for (Param& p : k.params) SetChild(p.ptr, scratch, p.name);
  }
  std::string calls, args;
  for (Program& p : m.programs) {
    SetChild(p.ptr, "/programs", p.name);
    SetChild(calls, p.ptr, "calls");
    for (size_t i = 0; i < p.calls.size(); ++i) {
      Call& c = p.calls[i];
      SetChild(c.ptr, calls, i);
      SetChild(args, c.ptr, "args");
      for (Arg& a : c.args) SetChild(a.ptr, args, a.param);
    }
  }
}

}  // namespace loadplan::verifier

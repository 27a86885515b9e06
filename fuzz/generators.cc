// GenManifest: a valid manifest drawn from the parts in gen_basics/gen_derive/gen_serving.
#include "fuzz/generators.h"

#include "fuzz/gen_draft.h"

namespace loadplan::fuzz {

rc::Gen<verifier::Manifest> GenManifest() {
  return rc::gen::exec([] {
    detail::Draft d;
    d.m.name = *rc::gen::element<std::string>("m", "tiny", "gpt-oss/x", "a~b", "model");
    d.m.vars = detail::DrawVars();
    d.m.load.lanes = *rc::gen::weightedElement<uint32_t>({{3, 1}, {2, 2}, {1, 3}, {1, 4}});
    d.m.load.prefetch = *rc::gen::weightedElement<uint32_t>({{3, 0}, {2, 1}, {1, 2}, {1, 3}});
    for (const verifier::Variable& v : d.m.vars) d.names.insert(v.name);
    detail::DrawDerive(d);
    detail::DrawServing(d);
    verifier::AssignPointers(d.m);
    return d.m;
  });
}

}  // namespace loadplan::fuzz

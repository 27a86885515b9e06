#!/usr/bin/env python3
"""The zoo check: every family scripts/dev/zoo/make_zoo.py saved, through loadplan.

    python3 scripts/dev/zoo/check_zoo.py ZOO_DIR [--device cuda|cpu] [--types a,b] [--json F] [--md F]

Per family (a folder ZOO_DIR/<model_type> and its record in ZOO_DIR/zoo.json):
  import  loadplan.import_model(folder, layout="transformers") makes a manifest that verifies
  layout  every parameter and persistent buffer of transformers' model is a resident buffer of
          the manifest with its shape (tied ones excepted)
  bytes   (cuda) loadplan.load's tensors equal safetensors' bytes (a stacked buffer: its
          tensors one after another; a sliced one: torch's narrow of its tensor)
  logits  loadplan.transformers' model gives logits torch.equal to transformers' own
          from_pretrained on a fixed prompt (cuda: loadplan.transformers.from_pretrained; cpu:
          the same meta model and attach() with the manifest's bindings read by safetensors)
  cache   the manifest's cache bytes at batch 1, ctx 8 against transformers' cache after a
          prefill of 8 tokens (make_zoo.py recorded it): exact, differs, or unknown
Prints one line per family and the totals; --json / --md write the rows.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import time
import traceback

PROMPT = [1, 5, 9, 13, 17, 21, 25, 29]
DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "float32": 4, "float64": 8, "int64": 8, "int32": 4,
               "uint8": 1, "int8": 1, "bool": 1, "BF16": 2, "F16": 2, "F32": 4, "U8": 1, "I8": 1}


def resident(manifest: dict) -> dict:
    """Buffers a load hands back: weights and exported carries."""
    return {n: b for n, b in manifest["buffers"].items()
            if b["kind"] == "weight" or (b["kind"] == "carry" and b.get("export"))}


def check_layout(manifest: dict, rec: dict) -> list:
    """Problems: a model tensor with no buffer, or of another shape."""
    have = resident(manifest)
    tied = {n for group in rec["model"]["tied"] for n in group[1:]}
    tied |= {n for group in rec["model"]["tied"] for n in group if n not in have}
    problems = []
    for name in rec["model"]["state_dict"]:
        t = rec["model"]["tensors"].get(name)
        if t is None or name in tied and name not in have:
            continue
        b = have.get(name)
        if b is None:
            problems.append(f"{name} has no buffer")
        elif list(b["shape"]) != list(t["shape"]):
            problems.append(f"{name}: buffer {b['shape']}, transformers {t['shape']}")
    return problems


def shape_at(dims: list, batch: int, ctx: int) -> int:
    env = {"batch": batch, "ctx": ctx, "min": min, "max": max}
    return math.prod(int(eval(str(d), {"__builtins__": {}}, env)) for d in dims)


def check_cache(manifest: dict, rec: dict) -> str:
    ours = 0
    for b in manifest["buffers"].values():
        if b["kind"] == "state":
            ours += shape_at(b["shape"], 1, len(PROMPT)) * DTYPE_BYTES[b["dtype"]]
    theirs = 0
    for layer in rec.get("cache", []):  # keys, values, conv and recurrent states
        for k, v in layer.items():
            if k.startswith("_"):
                continue
            for t in v if isinstance(v, list) else [v]:
                if isinstance(t, dict) and "shape" in t:
                    theirs += math.prod(t["shape"]) * DTYPE_BYTES.get(t["dtype"], 2)
    if not rec.get("cache"):
        return "not compared (no cache from transformers)"
    if ours == 0:
        return "unknown (the manifest plans none)"
    return "exact" if ours == theirs else f"differs (loadplan {ours} B, transformers {theirs} B)"


def reference_tensors(manifest: dict, folder: str, torch, device) -> dict:
    """Each resident buffer as the manifest binds it, read by safetensors."""
    from safetensors import safe_open
    index = {}
    for f in os.listdir(folder):
        if f.endswith(".safetensors"):
            with safe_open(os.path.join(folder, f), "pt") as h:
                for k in h.keys():
                    index[k] = h.get_tensor(k)
    out = {}
    for name, b in resident(manifest).items():
        parts = b.get("tensors") or ([b["tensor"]] if "tensor" in b else None)
        if parts is None:
            continue
        if "slice" in b:  # part of one tensor along one dimension (schema 2)
            s = b["slice"]
            part = index[b["tensor"]].narrow(s["dim"], s["start"], s["length"])
            out[name] = part.contiguous().reshape(b["shape"]).to(device)
            continue
        flat = torch.cat([index[p].reshape(-1) for p in parts])
        out[name] = flat.reshape(b["shape"]).to(device)
    return out


def reference_model(folder: str, torch, transformers, **kwargs):
    """transformers' own from_pretrained, through the class loadplan.transformers builds (the
    auto class's, else the one the config's `architectures` names: emu3's and mllama's text
    models, which AutoModelForCausalLM refuses)."""
    import loadplan.transformers as lt
    cls = lt.model_class(transformers.AutoConfig.from_pretrained(folder))
    return cls.from_pretrained(folder, dtype=torch.bfloat16, **kwargs).eval()


def ready(model):
    """What a user of the family calls before a forward (X-MOD: its default language)."""
    if hasattr(model, "set_default_language"):
        languages = getattr(model.config, "languages", None) or ["en_XX"]
        model.set_default_language(getattr(model.config, "default_language", None) or languages[0])
    return model


def logits_cpu(folder: str, manifest: dict, torch, transformers) -> str:
    import loadplan.transformers as lt
    ids = torch.tensor([PROMPT])
    ref = ready(reference_model(folder, torch, transformers))
    model = lt.build_meta_model(folder, torch.bfloat16)
    lt.make_nonpersistent(model, torch.device("cpu"))  # before the tensors, as from_pretrained
    lt.attach(model, reference_tensors(manifest, folder, torch, "cpu"), torch.device("cpu"))
    ready(model.eval())
    with torch.no_grad():
        a = model(input_ids=ids, use_cache=False).logits
        b = ref(input_ids=ids, use_cache=False).logits
    return "equal" if torch.equal(a, b) else f"differ (max {float((a - b).abs().max()):.3g})"


def bytes_and_logits_cuda(folder: str, manifest: dict, torch, transformers) -> tuple:
    import loadplan
    import loadplan.transformers as lt
    loaded = loadplan.load(json.dumps(manifest), folder, 0)
    ref = reference_tensors(manifest, folder, torch, "cuda")
    sd = loaded.state_dict()
    bad = [n for n, t in ref.items()  # as bytes (a 0-d tensor has no byte view: flattened)
           if not torch.equal(sd[n].reshape(-1).view(torch.uint8),
                              t.contiguous().reshape(-1).view(torch.uint8))]
    del sd, loaded
    nbytes = "equal" if not bad else f"differ: {', '.join(bad[:3])}"
    ids = torch.tensor([PROMPT], device="cuda")
    model = ready(lt.from_pretrained(folder, device=0))
    ref_model = ready(reference_model(folder, torch, transformers, device_map="cuda"))
    with torch.no_grad():
        a = model(input_ids=ids, use_cache=False).logits
        b = ref_model(input_ids=ids, use_cache=False).logits
    logits = "equal" if torch.equal(a, b) else f"differ (max {float((a - b).abs().max()):.3g})"
    return nbytes, logits


def one(mt: str, zoo_dir: str, rec: dict, device: str, torch, transformers) -> dict:
    import loadplan
    row = {"model_type": mt, "import": "", "layout": "", "bytes": "not run", "logits": "not run",
           "cache": "", "notes": []}
    folder = os.path.join(zoo_dir, mt)
    try:
        imported = loadplan.import_model(folder, layout="transformers")
    except Exception as e:
        row["import"] = f"fails: {e}"[:300]
        return row
    row["import"] = "ok"
    row["notes"] = imported.notes + imported.warnings
    manifest = json.loads(imported.manifest)
    problems = check_layout(manifest, rec)
    row["layout"] = "ok" if not problems else f"{len(problems)} problems: {'; '.join(problems[:3])}"
    row["cache"] = check_cache(manifest, rec)
    try:
        if device == "cuda":
            row["bytes"], row["logits"] = bytes_and_logits_cuda(folder, manifest, torch, transformers)
        else:
            row["logits"] = logits_cpu(folder, manifest, torch, transformers)
    except Exception as e:
        row["logits"] = f"fails: {type(e).__name__}: {e}"[:300]
        row["trace"] = traceback.format_exc()[-800:]
    return row


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("zoo")
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--types", default="")
    ap.add_argument("--json", default="")
    ap.add_argument("--md", default="")
    a = ap.parse_args()
    import torch
    import transformers
    zoo = json.load(open(os.path.join(a.zoo, "zoo.json")))
    wanted = [t for t in a.types.split(",") if t]
    rows = []
    for mt, rec in sorted(zoo["models"].items()):
        if wanted and mt not in wanted:
            continue
        if not os.path.isdir(os.path.join(a.zoo, mt)) or "saved" not in rec:
            rows.append({"model_type": mt, "import": "not built", "layout": "", "bytes": "",
                         "logits": "", "cache": "", "notes": [],
                         "why": f"{rec.get('stage')}: {rec.get('error', '')}"[:300]})
            continue
        t0 = time.time()
        row = one(mt, a.zoo, rec, a.device, torch, transformers)
        row["seconds"] = round(time.time() - t0, 2)
        rows.append(row)
        print(f"{mt}: import {row['import'][:60]} | layout {row['layout'][:80]} | bytes "
              f"{row['bytes'][:40]} | logits {row['logits'][:80]} | cache {row['cache'][:60]}",
              flush=True)
    built = [r for r in rows if r["import"] != "not built"]
    ok = [r for r in built if r["import"] == "ok" and r["layout"] == "ok"
          and r["logits"] == "equal" and r["bytes"] in ("equal", "not run")]
    print(f"{len(ok)} of {len(built)} built families pass import, layout, bytes and logits "
          f"({len(rows)} causal-LM model types; transformers {zoo['transformers']})")
    if a.json:
        json.dump({"transformers": zoo["transformers"], "torch": zoo["torch"], "device": a.device,
                   "rows": rows}, open(a.json, "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""loadplan.transformers.from_pretrained beside transformers' own from_pretrained(device_map="cuda").

    python3 bench/transformers_load.py make DIR {llama8b-16|llama70b-16|qwen3moe-4}  # BF16, random
    python3 bench/transformers_load.py compare DIR [--rounds 3] [--cold-rounds 1]  # fresh processes
    python3 bench/transformers_load.py one {loadplan|transformers} DIR [warm|cold]  # one load

`make` writes an HF folder (config.json from tests/data/hf, fewer layers; safetensors shards of
5 GB with an index) in the checkpoint's own layout (per-expert tensors for the MoE). `compare`
reads the shards once (page cache warm), then runs each loader in a fresh process per round,
alternating, and prints one JSON line per load and the medians: seconds from the call to a
model ready on the GPU (`import torch, transformers` excluded from both: they run before the
clock starts; transformers imports a family's modeling code lazily, on first use, so "warm"
rows also import it, and loadplan's module, before the clock, and "cold" rows leave both
inside it, as a script's first call pays them), the GPU memory the load took at its most (torch's peak for transformers; the
backend's peak allocation for loadplan beside its prediction), and the logits of a fixed
prompt (equal between the two loaders). docs/performance.md quotes it.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time

SHAPES = {  # name: (tests/data/hf folder, layers)
    "llama8b-16": ("llama-3.1-8b", 16),
    "llama70b-16": ("llama-3.1-70b", 16),  # a TP=8 rank of 3.9 GB, the size TP=8 serves
    "qwen3moe-4": ("qwen3-30b-a3b", 4),
}
PROMPT = [1, 5, 9, 13, 17, 21, 25, 29]
SHARD_BYTES = 5 * 10**9


def checkpoint_tensors(model, torch):
    """(name, shape) as the checkpoint stores them: transformers' fused experts split per
    expert (qwen2_moe pattern: gate_up_proj [E, 2I, H] -> experts.e.{gate,up}_proj.weight)."""
    for name, p in model.state_dict().items():
        if name.endswith("mlp.experts.gate_up_proj"):
            e, two_i, h = p.shape
            base = name[: -len("gate_up_proj")]
            for x in range(e):
                yield f"{base}{x}.gate_proj.weight", (two_i // 2, h)
                yield f"{base}{x}.up_proj.weight", (two_i // 2, h)
        elif name.endswith("mlp.experts.down_proj"):
            e, h, i = p.shape
            base = name[: -len("down_proj")]
            for x in range(e):
                yield f"{base}{x}.down_proj.weight", (h, i)
        else:
            yield name, tuple(p.shape)


def make(folder: str, shape: str) -> None:
    import torch
    import transformers
    from safetensors.torch import save_file
    src, layers = SHAPES[shape]
    here = os.path.dirname(os.path.abspath(__file__))
    config = json.load(open(os.path.join(here, "..", "tests", "data", "hf", src, "config.json")))
    config["num_hidden_layers"] = layers
    config.pop("layer_types", None)
    os.makedirs(folder, exist_ok=True)
    json.dump(config, open(os.path.join(folder, "config.json"), "w"), indent=1)
    cfg = transformers.AutoConfig.from_pretrained(folder)
    with torch.device("meta"):
        meta = transformers.AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16)
    torch.manual_seed(0)
    shard, size, weight_map, n = {}, 0, {}, 0
    names = list(checkpoint_tensors(meta, torch))

    def flush():
        nonlocal shard, size, n
        if not shard:
            return
        n += 1
        file = f"model-{n:05d}.safetensors"
        save_file(shard, os.path.join(folder, file), metadata={"format": "pt"})
        weight_map.update({k: file for k in shard})
        shard, size = {}, 0

    where = "cuda" if torch.cuda.is_available() else "cpu"  # random numbers at GPU speed
    for name, dims in names:
        t = torch.empty(dims, dtype=torch.bfloat16, device=where).normal_(0, 0.02).cpu()
        shard[name] = t
        size += t.numel() * 2
        if size >= SHARD_BYTES:
            flush()
    flush()
    json.dump({"metadata": {}, "weight_map": weight_map},
              open(os.path.join(folder, "model.safetensors.index.json"), "w"), indent=1)
    print(f"{folder}: {len(names)} tensors in {n} shards")


def one(loader: str, folder: str, imports: str = "warm") -> None:
    import torch
    import transformers  # noqa: F401  (imported before the clock, for both loaders)
    torch.cuda.init()
    torch.zeros(1, device="cuda")  # the context, before the clock, for both
    if imports == "warm":  # the family's modeling code and loadplan's module, for both
        import loadplan.transformers
        loadplan.transformers.model_class(transformers.AutoConfig.from_pretrained(folder))
    free0, _ = torch.cuda.mem_get_info()
    t0 = time.perf_counter()
    if loader == "loadplan":
        import loadplan.transformers
        model = loadplan.transformers.from_pretrained(folder, device=0)
    else:
        model = transformers.AutoModelForCausalLM.from_pretrained(
            folder, dtype=torch.bfloat16, device_map="cuda")
    torch.cuda.synchronize()
    seconds = time.perf_counter() - t0
    free1, _ = torch.cuda.mem_get_info()
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([PROMPT], device="cuda"), use_cache=False).logits
    row = {"loader": loader, "imports": imports, "seconds": seconds, "resident_bytes": free0 - free1,
           "logits_sum": float(logits.float().sum()), "logits_first": logits[0, 0, :4].tolist()}
    if loader == "loadplan":
        r = model.loadplan_report
        row.update({"predicted_peak": r["predicted_peak"], "measured_peak": r["measured_peak"],
                    "gbps": r["gbps"], "import_s": r["import_s"], "load_s": r["load_s"],
                    "build_meta_s": r["build_meta_s"], "attach_s": r.get("attach_s"),
                    "wall_s": r.get("wall_s")})
    else:
        row["torch_peak"] = torch.cuda.max_memory_allocated()
    print(json.dumps(row), flush=True)


def compare(folder: str, rounds: int, cold_rounds: int) -> None:
    for f in sorted(os.listdir(folder)):  # page cache warm for both
        with open(os.path.join(folder, f), "rb") as h:
            while h.read(1 << 26):
                pass
    rows = []
    runs = [("warm", r) for r in range(rounds)] + [("cold", r) for r in range(cold_rounds)]
    for imports, r in runs:
        for loader in ("loadplan", "transformers") if r % 2 == 0 else ("transformers", "loadplan"):
            out = subprocess.run([sys.executable, __file__, "one", loader, folder, imports],
                                 capture_output=True, text=True, timeout=600)
            line = [x for x in out.stdout.splitlines() if x.startswith("{")]
            if out.returncode != 0 or not line:
                print(f"{loader} failed: {out.stderr[-1500:]}", flush=True)
                continue
            rows.append(json.loads(line[-1]))
            print(line[-1], flush=True)
    summary = {"folder": folder}
    for imports in ("warm", "cold"):
        mine = [x for x in rows if x["imports"] == imports]
        med = {k: statistics.median(x["seconds"] for x in mine if x["loader"] == k)
               for k in ("loadplan", "transformers") if any(x["loader"] == k for x in mine)}
        summary[f"median_s_{imports}"] = med
        if len(med) == 2:
            summary[f"speedup_{imports}"] = med["transformers"] / med["loadplan"]
    summary["logits_equal_across_loaders"] = (
        len({x["loader"] for x in rows}) == 2 and
        len({json.dumps(x["logits_first"]) for x in rows}) == 1)
    lp = [x for x in rows if x["loader"] == "loadplan"]
    if lp:
        summary["peak_equals_prediction"] = all(x["measured_peak"] == x["predicted_peak"] for x in lp)
    print("SUMMARY " + json.dumps(summary), flush=True)


def main() -> int:
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "make" and len(sys.argv) == 4:
        make(sys.argv[2], sys.argv[3])
    elif cmd == "one" and len(sys.argv) in (4, 5):
        one(sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) == 5 else "warm")
    elif cmd == "compare" and len(sys.argv) >= 3:
        def arg(flag: str, default: int) -> int:
            return int(sys.argv[sys.argv.index(flag) + 1]) if flag in sys.argv else default
        compare(sys.argv[2], arg("--rounds", 3), arg("--cold-rounds", 1))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

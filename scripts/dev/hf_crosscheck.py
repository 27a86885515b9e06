#!/usr/bin/env python3
"""On the GPU machine: `loadplan import` + `loadplan.load` against the reference (transformers).

    python3 scripts/dev/hf_crosscheck.py --loadplan build/cli/loadplan --out DIR [--only 1,2,3,4]
        [--gpu 0] [--import-args "--max-batch 4 --max-ctx 1024"] [--timeout 600]
    python3 scripts/dev/hf_crosscheck.py --emulate --out DIR     (no GPU, no loadplan: see below)

1. llama / qwen3_moe: tiny seeded random models save_pretrained'd into sharded safetensors
   (an index), `loadplan import DIR -o m.json`, loadplan.load(...).state_dict("torch") assigned
   into a model built on the meta device; its logits on a fixed prompt must be torch.equal to
   from_pretrained(DIR, device_map="cuda")'s. Where the transformers version fuses MoE experts
   in memory (gate_up_proj [E, 2I, H], down_proj [E, H, I], not the checkpoint's per-expert
   names), the loaded per-expert tensors are fused as transformers' conversion mapping says
   (MergeModulelist(dim=0) then Concatenate(dim=1)), and also handed to transformers' own
   conversion (from_pretrained(None, config=..., state_dict=tensors)).
2. gpt-oss MXFP4: a tiny gpt_oss skeleton (scripts/hf_skeleton.py), `loadplan import` (default
   recipe), `loadplan gen` (real pseudo-random data), `loadplan import --recipe mxfp4-bf16`,
   loadplan.load: the BF16 gate_up_proj / down_proj carries must equal byte for byte what
   transformers makes of the same files (from_pretrained with Mxfp4Config(dequantize=True), or
   else convert_moe_packed_tensors on the files' tensors; the line says which).
3. checkpoints written by the reference safetensors package (save_pretrained's from 1, and one
   written directly with safetensors.torch.save_file + a hand-made HF index): `loadplan import`
   then `loadplan run m.json --checkpoint DIR --check` exits 0.
4. (no loadplan needed) scripts/hf_skeleton.py's names per family as transformers reads them:
   from_pretrained on each family's tiny skeleton (FP8 / MXFP4 with dequantize=True) misses
   nothing and finds nothing unexpected but DeepSeek-V3's MTP layer (transformers builds none),
   and save_pretrained of the unquantised model writes the skeleton's names and shapes.

One PASS / FAIL / SKIP line per check, with numbers; logs and results.json under --out.
Exit 0 all pass, 1 any FAIL, 3 transformers not importable (checks 1-2 skipped; 3's direct
checkpoint still runs and a FAIL there still exits 1).

--emulate (development without a GPU or loadplan): "loadplan.load" is replaced by reading the
files with safetensors, gen by numpy random bytes, import/run are skipped; it exercises only the
transformers side (save/from_pretrained/meta+assign/logits/MXFP4 dequant, check 4) on --device.
"""
import argparse
import json
import math
import os
import shlex
import shutil
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # scripts/: hf_skeleton.py
import hf_skeleton  # noqa: E402  (stdlib only)

import numpy as np  # noqa: E402
import torch  # noqa: E402

try:
    import transformers
    from transformers import AutoConfig, AutoModelForCausalLM
except Exception as e:  # noqa: BLE001
    transformers, TRANSFORMERS_ERROR = None, e

RESULTS = []
LOG = None


def log(*a):
    s = " ".join(str(x) for x in a)
    print(s, flush=True)
    if LOG:
        LOG.write(s + "\n")
        LOG.flush()


def result(check, status, detail):
    RESULTS.append({"check": check, "status": status, "detail": detail})
    log(f"{status} {check}: {detail}")


class Env:
    def __init__(self, a):
        self.a, self.out, self.dev = a, a.out, a.device
        self.emulate = a.emulate
        self.saved = {}  # family -> save_pretrained folder (check 1)

    def cli(self, *args, ok=(0,), name="cli"):
        cmd = [self.a.loadplan, *map(str, args)]
        t0 = time.monotonic()
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=self.a.timeout)
        with open(os.path.join(self.out, f"{name}.log"), "a") as f:
            f.write(f"$ {' '.join(cmd)}\n# exit {p.returncode} in {time.monotonic() - t0:.1f}s\n"
                    f"{p.stdout}{p.stderr}\n")
        if p.returncode not in ok:
            raise RuntimeError(f"`{' '.join(cmd)}` exited {p.returncode}: "
                               f"{(p.stderr or p.stdout).strip()[-600:]}")
        return p

    def import_(self, model_dir, manifest, *extra, name="import"):
        if self.emulate:
            return
        self.cli("import", model_dir, "-o", manifest, *shlex.split(self.a.import_args), *extra,
                 name=name)

    def load(self, manifest, model_dir):
        """name -> torch tensor on the device: loadplan.load(...).state_dict("torch")."""
        if self.emulate:
            from safetensors.torch import load_file
            sd = {}
            for f in sorted(os.listdir(model_dir)):
                if f.endswith(".safetensors"):
                    sd.update({k: v.to(self.dev) for k, v in load_file(os.path.join(model_dir, f)).items()})
            return sd
        import loadplan
        model = loadplan.load(manifest, model_dir, device=self.a.gpu)
        return model.state_dict("torch")  # each tensor keeps the model's pool alive


def dtype_kw(dtype):
    # transformers >= 4.56 takes dtype=, older ones torch_dtype=
    v = tuple(int(x) for x in transformers.__version__.split(".")[:2])
    return {"dtype": dtype} if v >= (4, 56) else {"torch_dtype": dtype}


# ----- check 1 -----

TINY = {
    "llama": dict(model_type="llama", hidden_size=256, intermediate_size=512, num_hidden_layers=3,
                  num_attention_heads=4, num_key_value_heads=2, vocab_size=1000,
                  max_position_embeddings=512, rms_norm_eps=1e-5, rope_theta=500000.0,
                  tie_word_embeddings=True, bos_token_id=1, eos_token_id=2),
    "qwen3_moe": dict(model_type="qwen3_moe", hidden_size=256, intermediate_size=512,
                      moe_intermediate_size=128, num_experts=4, num_experts_per_tok=2,
                      num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                      head_dim=64, vocab_size=1000, max_position_embeddings=512,
                      max_window_layers=2, norm_topk_prob=True, decoder_sparse_step=1,
                      mlp_only_layers=[], tie_word_embeddings=False, bos_token_id=1,
                      eos_token_id=2),
}


def save_tiny(family, d, dtype=torch.bfloat16, seed=0):
    cfg = AutoConfig.for_model(**TINY[family])
    cfg._attn_implementation = "eager"
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(cfg, **dtype_kw(dtype))
    with torch.no_grad():  # spread the norms off 1.0 so that every tensor matters
        for n, p in model.named_parameters():
            if "norm" in n:
                p.add_(torch.randn_like(p) * 0.1)
    model.save_pretrained(d, max_shard_size="1MB")  # sharded: an index
    return cfg


def restore_buffers(model, ref, dev):
    """Non-persistent buffers (rotary inv_freq: from config, in no checkpoint) stay on meta
    after load_state_dict(assign=True); rebuild them on the device, compare with the reference's
    and, if they differ by a bit, take the reference's (said in the result)."""
    notes = []
    for name, mod in list(model.named_modules()):
        metas = [b for b, t in mod.named_buffers(recurse=False) if t.is_meta]
        if not metas:
            continue
        try:  # as from_pretrained's _init_weights: computed on the CPU from config, then moved
            new = type(mod)(mod.config).to(dev)
        except Exception:  # noqa: BLE001
            new = None
        parent = model.get_submodule(name.rsplit(".", 1)[0]) if "." in name else model
        if new is not None:
            setattr(parent, name.rsplit(".", 1)[-1], new)
            mod = new
        refmod = ref.get_submodule(name)
        for b, t in list(mod.named_buffers(recurse=False)):
            r = getattr(refmod, b)
            if t.is_meta or not torch.equal(t.to(r.device), r):
                notes.append(f"{name}.{b} from the reference")
                mod.register_buffer(b, r.clone(), persistent=False)
    return notes


def fuse_like_transformers(tensors, model_keys):
    """Checkpoint per-expert tensors -> transformers' fused parameters, as its conversion mapping
    (qwen2_moe / mixtral) says: gate_up_proj = cat([stack(gate_j), stack(up_j)], dim=1),
    down_proj = stack(down_j). Returns (new dict, list of fused names)."""
    out, fused = dict(tensors), []
    for key in model_keys:
        for tail, parts in (("gate_up_proj", ("gate_proj", "up_proj")), ("down_proj", ("down_proj",))):
            if not key.endswith(f".experts.{tail}"):
                continue
            prefix = key[: -len(tail)]
            stacks = []
            for part in parts:
                j, group = 0, []
                while f"{prefix}{j}.{part}.weight" in tensors:
                    group.append(out.pop(f"{prefix}{j}.{part}.weight"))
                    j += 1
                if group:
                    stacks.append(torch.stack(group, 0))
            if len(stacks) == len(parts):
                out[key] = torch.cat(stacks, 1) if len(stacks) > 1 else stacks[0]
                fused.append(key)
    return out, fused


def logits_of(model, ids):
    with torch.no_grad():
        return model(input_ids=ids).logits


def check1(env, family):
    name = f"1-{family}"
    d = os.path.join(env.out, f"tiny-{family}")
    shutil.rmtree(d, ignore_errors=True)
    cfg = save_tiny(family, d)
    env.saved[family] = d  # for check 3, whatever happens below
    shards = sorted(f for f in os.listdir(d) if f.endswith(".safetensors"))
    assert os.path.exists(os.path.join(d, "model.safetensors.index.json")), "no index"
    manifest = os.path.join(env.out, f"tiny-{family}.json")
    env.import_(d, manifest)
    tensors = env.load(manifest, d)

    kw = dict(**dtype_kw(torch.bfloat16), device_map=env.dev, attn_implementation="eager")
    ref = AutoModelForCausalLM.from_pretrained(d, **kw).eval()
    ref_sd = ref.state_dict()

    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(cfg, **dtype_kw(torch.bfloat16),
                                                 attn_implementation="eager")
    keys = set(model.state_dict().keys())
    ckpt_names = set(tensors)
    missing = sorted(keys - ckpt_names)
    notes = []
    fed, fused = dict(tensors), []
    if any(k.endswith((".experts.gate_up_proj", ".experts.down_proj")) for k in missing):
        fed, fused = fuse_like_transformers(tensors, missing)
        ex = next(k for k in fused)
        notes.append(f"transformers {transformers.__version__} fuses experts: checkpoint "
                     f"'...experts.{{j}}.{{gate,up,down}}_proj.weight' vs model '{ex}' "
                     f"{tuple(fed[ex].shape)}; {len(fused)} fused as its conversion mapping says")
    want = model.state_dict()
    for k, v in list(fed.items()):  # the package hands some dtypes over as bytes (docs/python.md)
        if k in want and v.dtype == torch.uint8 and want[k].dtype != torch.uint8:
            fed[k] = v.view(want[k].dtype).reshape(want[k].shape)
            notes.append(f"{k} came as uint8")
    res = model.load_state_dict({k: v for k, v in fed.items() if k in keys}, strict=False, assign=True)
    tied = False
    if getattr(cfg, "tie_word_embeddings", False):
        model.get_output_embeddings().weight = model.get_input_embeddings().weight
        tied = True
    still = [k for k in res.missing_keys if not (tied and k == "lm_head.weight")]
    notes += restore_buffers(model, ref, env.dev)
    metas = [n for n, t in list(model.named_parameters()) + list(model.named_buffers()) if t.is_meta]
    if still or metas:
        return result(name, "FAIL", f"not loaded: {still[:5]} meta: {metas[:5]}")
    model.eval()

    # by value where names coincide (and the fused ones)
    same = [k for k in ref_sd if k in fed]
    differ = [k for k in same if not torch.equal(fed[k].to(ref_sd[k].device), ref_sd[k])]
    g = torch.Generator().manual_seed(1234)
    ids = torch.randint(0, cfg.vocab_size, (2, 17), generator=g).to(env.dev)
    a, b = logits_of(model, ids), logits_of(ref, ids)
    eq = torch.equal(a, b)
    maxdiff = (a.float() - b.float()).abs().max().item()

    # transformers' own conversion on the loaded (checkpoint-named) tensors
    own = "n/a"
    if fused:
        try:
            # the loaded tensors (checkpoint names) written back out and read by from_pretrained,
            # which applies transformers' conversion mapping to them
            from safetensors.torch import save_file
            d2 = os.path.join(env.out, f"tiny-{family}-reloaded")
            os.makedirs(d2, exist_ok=True)
            save_file({k: v.detach().cpu().contiguous() for k, v in tensors.items()},
                      os.path.join(d2, "model.safetensors"), metadata={"format": "pt"})
            shutil.copyfile(os.path.join(d, "config.json"), os.path.join(d2, "config.json"))
            m2 = AutoModelForCausalLM.from_pretrained(d2, **kw).eval()
            own = "equal" if torch.equal(logits_of(m2, ids), b) else "DIFFERENT"
            del m2
        except Exception as e:  # noqa: BLE001
            own = f"unavailable ({type(e).__name__}: {str(e)[:120]})"
    detail = (f"{len(shards)} shards, {len(tensors)} tensors loaded, {len(same)}/{len(ref_sd)} "
              f"of from_pretrained's state dict found by name, {len(same) - len(differ)}/{len(same)} "
              f"of those torch.equal; logits "
              f"{tuple(a.shape)} torch.equal={eq} max|diff|={maxdiff:g}; own conversion: {own}"
              + ("; " + "; ".join(notes) if notes else ""))
    ok = eq and not differ and own in ("n/a", "equal")
    result(name, "PASS" if ok else "FAIL", detail + (f"; differ: {differ[:5]}" if differ else ""))
    return d


# ----- check 2 -----

def tiny_gpt_oss_config():
    c = json.load(open(os.path.join(hf_skeleton.CONFIGS, "gpt-oss-20b", "config.json")))
    c.update(hidden_size=256, intermediate_size=256, num_local_experts=4, num_experts_per_tok=2,
             experts_per_token=2, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, head_dim=64, vocab_size=1024, pad_token_id=0,
             eos_token_id=1,
             layer_types=["sliding_attention", "full_attention"])
    return c


def emulate_gen(skel, out):
    """--emulate: random bytes for every tensor of skel (valid e8m0 scales near 127)."""
    from safetensors.torch import save_file
    rng = np.random.default_rng(0)
    index = json.load(open(os.path.join(skel, "model.safetensors.index.json")))
    files = {}
    for t, f in index["weight_map"].items():
        files.setdefault(f, []).append(t)
    os.makedirs(out, exist_ok=True)
    for f, names in files.items():
        with open(os.path.join(skel, f), "rb") as h:
            n = int.from_bytes(h.read(8), "little")
            head = json.loads(h.read(n))
        ts = {}
        for t in names:
            dt, shape = head[t]["dtype"], head[t]["shape"]
            if dt == "U8":
                lo, hi = (120, 134) if t.endswith("_scales") else (0, 256)
                ts[t] = torch.from_numpy(rng.integers(lo, hi, size=shape, dtype=np.uint8))
            else:
                ts[t] = torch.from_numpy(rng.standard_normal(shape).astype(np.float32)).to(torch.bfloat16)
        save_file(ts, os.path.join(out, f), metadata={"format": "pt"})
    shutil.copyfile(os.path.join(skel, "model.safetensors.index.json"),
                    os.path.join(out, "model.safetensors.index.json"))


def files_tensors(d):
    from safetensors import safe_open
    sd = {}
    for f in sorted(os.listdir(d)):
        if f.endswith(".safetensors"):
            with safe_open(os.path.join(d, f), framework="pt") as h:
                for k in h.keys():
                    sd[k] = h.get_tensor(k)
    return sd


def check2(env):
    name = "2-gpt-oss-mxfp4"
    cfg = tiny_gpt_oss_config()
    skel, data = os.path.join(env.out, "gptoss-skel"), os.path.join(env.out, "gptoss-data")
    for p in (skel, data):
        shutil.rmtree(p, ignore_errors=True)
    hf_skeleton.write(cfg, skel, shards=2)
    m1, m2 = os.path.join(env.out, "gptoss-skel.json"), os.path.join(env.out, "gptoss-bf16.json")
    if env.emulate:
        emulate_gen(skel, data)
    else:
        env.import_(skel, m1, name="import-gptoss")
        env.cli("gen", m1, "-o", data, name="gen-gptoss")
    shutil.copyfile(os.path.join(skel, "config.json"), os.path.join(data, "config.json"))
    env.import_(data, m2, "--recipe", "mxfp4-bf16", name="import-gptoss")
    if env.emulate:  # the stand-in for loadplan's carries: transformers' own function
        from transformers.integrations.mxfp4 import convert_moe_packed_tensors
        raw = files_tensors(data)
        got = {}
        for k in list(raw):
            if k.endswith("_blocks"):
                base = k[: -len("_blocks")]
                got[base] = convert_moe_packed_tensors(raw[k], raw[base + "_scales"]).to(env.dev)
    else:
        got = env.load(m2, data)
    carries = sorted(k for k in got if k.endswith((".mlp.experts.gate_up_proj", ".mlp.experts.down_proj")))
    if len(carries) != 2 * cfg["num_hidden_layers"]:
        return result(name, "FAIL", f"expected {2 * cfg['num_hidden_layers']} carries, loaded "
                      f"{len(carries)}: {carries}")

    path, ref = None, {}
    try:
        from transformers import Mxfp4Config
        m = AutoModelForCausalLM.from_pretrained(
            data, quantization_config=Mxfp4Config(dequantize=True), **dtype_kw(torch.bfloat16),
            device_map=env.dev)
        sd = m.state_dict()
        ref = {k: sd[k] for k in carries if k in sd}
        if len(ref) == len(carries):
            path = f"from_pretrained(Mxfp4Config(dequantize=True)) (transformers {transformers.__version__})"
        else:
            log(f"  from_pretrained state dict lacks {sorted(set(carries) - set(ref))[:3]}")
    except Exception as e:  # noqa: BLE001
        log(f"  from_pretrained with Mxfp4Config(dequantize=True) failed: {type(e).__name__}: {e}")
    if path is None:
        from transformers.integrations.mxfp4 import convert_moe_packed_tensors
        raw = files_tensors(data)
        ref = {k: convert_moe_packed_tensors(raw[k + "_blocks"].to(env.dev), raw[k + "_scales"].to(env.dev),
                                             dtype=torch.bfloat16) for k in carries}
        path = "convert_moe_packed_tensors on the files' tensors"
    bad, nbytes = [], 0
    for k in carries:
        a, b = got[k], ref[k].to(got[k].device)
        if a.dtype == torch.uint8 and b.dtype != torch.uint8:  # bytes from the package
            b = b.contiguous().view(torch.uint8).reshape(a.shape)
        if a.shape != b.shape or a.dtype != b.dtype:
            bad.append(f"{k}: {a.dtype}{tuple(a.shape)} vs {b.dtype}{tuple(b.shape)}")
            continue
        nbytes += a.numel() * a.element_size()
        ia, ib = a.contiguous().view(torch.uint8), b.contiguous().view(torch.uint8)
        if not torch.equal(ia, ib):
            n = (a.view(torch.int16) != b.view(torch.int16)).sum().item() if a.dtype == torch.bfloat16 else -1
            bad.append(f"{k}: {n} of {a.numel()} elements differ")
    shapes = ", ".join(f"{k.rsplit('.', 1)[-1]} {tuple(got[k].shape)}" for k in carries[:2])
    detail = (f"{len(carries)} carries ({shapes}), {nbytes} bytes compared against {path}"
              + (f"; {bad[:4]}" if bad else ": byte for byte equal"))
    result(name, "FAIL" if bad else "PASS", detail)


# ----- check 3 -----

def direct_checkpoint(d):
    """A tiny llama checkpoint written with safetensors.torch.save_file: 2 shards + HF index."""
    from safetensors.torch import save_file
    c = dict(TINY["llama"], architectures=["LlamaForCausalLM"], tie_word_embeddings=False,
             torch_dtype="bfloat16", num_hidden_layers=2)
    items = hf_skeleton.tensors(c)
    g = torch.Generator().manual_seed(7)
    parts = hf_skeleton.split(items, 2)
    os.makedirs(d, exist_ok=True)
    weight_map, total = {}, 0
    for k, part in enumerate(parts):
        file = hf_skeleton.hf_name(k, len(parts))
        ts = {n: torch.randn(s, generator=g).to(torch.bfloat16) for n, _, s in part}
        save_file(ts, os.path.join(d, file), metadata={"format": "pt"})
        for n, t in ts.items():
            weight_map[n] = file
            total += t.numel() * t.element_size()
    with open(os.path.join(d, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(c, f, indent=2)
    return d


def check3(env, dirs):
    for label, d in dirs:
        name = f"3-run-check-{label}"
        m = os.path.join(env.out, f"run-{label}.json")
        if env.emulate:
            result(name, "SKIP", f"--emulate: no loadplan ({d})")
            continue
        env.import_(d, m, name="import-run")
        t0 = time.monotonic()
        p = env.cli("run", m, "--checkpoint", d, "--check", ok=(0, 1, 2, 3, 4), name="run-check")
        last = ((p.stdout + p.stderr).strip().splitlines() or [""])[-1][:300]
        result(name, "PASS" if p.returncode == 0 else "FAIL",
               f"`loadplan run --check` exit {p.returncode} in {time.monotonic() - t0:.1f}s: {last}")


# ----- check 4 (no loadplan needed) -----

def tiny_family_configs():
    """Each family's committed config scaled down: hidden 256, 2-3 layers, 4 experts."""
    att = dict(hidden_size=256, num_attention_heads=4, vocab_size=1000, bos_token_id=0,
               eos_token_id=1, pad_token_id=None)
    mla = dict(att, num_key_value_heads=4, intermediate_size=512, moe_intermediate_size=128,
               n_routed_experts=4, num_experts_per_tok=2, q_lora_rank=128, kv_lora_rank=64,
               qk_nope_head_dim=32, qk_rope_head_dim=64, v_head_dim=32)
    over = {
        "llama-3.1-8b": dict(att, num_key_value_heads=2, intermediate_size=512, num_hidden_layers=2),
        "qwen3-32b": dict(att, num_key_value_heads=2, head_dim=64, intermediate_size=512,
                          num_hidden_layers=2, max_window_layers=2),
        "qwen3-30b-a3b": dict(att, num_key_value_heads=2, head_dim=64, intermediate_size=512,
                              moe_intermediate_size=128, num_experts=4, num_experts_per_tok=2,
                              num_hidden_layers=2, max_window_layers=2),
        "mixtral-8x7b": dict(att, num_key_value_heads=2, intermediate_size=512,
                             num_local_experts=4, num_hidden_layers=2),
        "deepseek-v3": dict(mla, n_group=2, topk_group=1, num_hidden_layers=3,
                            first_k_dense_replace=1),
        "kimi-k2": dict(mla, num_hidden_layers=2, first_k_dense_replace=1),
        "gpt-oss-20b": dict(att, pad_token_id=0, num_key_value_heads=2, head_dim=64,
                            intermediate_size=256, num_local_experts=4, num_experts_per_tok=2,
                            num_hidden_layers=2, layer_types=["sliding_attention", "full_attention"]),
    }
    for model, o in over.items():
        c = json.load(open(os.path.join(hf_skeleton.CONFIGS, model, "config.json")))
        c.update(o)
        c.pop("auto_map", None)  # the Hub's remote code: use transformers' own class
        yield model, c


def check4(env):
    """hf_skeleton's tiny checkpoints as transformers reads them: from_pretrained on the skeleton
    (zeros; quantized ones with dequantize=True) must find every parameter and nothing else but
    the MTP layer, which transformers does not build; and save_pretrained of the unquantised
    model must write the skeleton's names, shapes and dtypes. (transformers does not check the
    shapes of FP8 weight_scale_inv when it loads: a skeleton with 64x64 blocks loads as well;
    the [ceil(N/128), ceil(K/128)] shapes agree with its FP8Linear's definition.)"""
    from safetensors import safe_open
    for model, c in tiny_family_configs():
        name = f"4-names-{model}"
        try:
            d = os.path.join(env.out, f"names-{model}")
            shutil.rmtree(d, ignore_errors=True)
            hf_skeleton.write(c, d, shards=2)
            q = (c.get("quantization_config") or {}).get("quant_method")
            qc = None
            if q == "mxfp4":
                from transformers import Mxfp4Config
                qc = Mxfp4Config(dequantize=True)
            elif q == "fp8":
                from transformers import FineGrainedFP8Config
                qc = FineGrainedFP8Config(dequantize=True)
            if c["model_type"] == "kimi_k2":  # transformers knows it as deepseek_v3
                c = dict(c, model_type="deepseek_v3")
                with open(os.path.join(d, "config.json"), "w") as f:
                    json.dump(c, f)
            kw = dict(**dtype_kw(torch.bfloat16), device_map="cpu", output_loading_info=True)
            if qc is not None:
                kw["quantization_config"] = qc
            try:
                m, info = AutoModelForCausalLM.from_pretrained(d, **kw)
                del m
                skipped = None
            except RuntimeError as e:  # transformers < 5 has no FP8 dequantize: needs a GPU
                if env.dev != "cpu":
                    raise
                info, skipped = {"missing_keys": [], "unexpected_keys": [], "mismatched_keys": []}, str(e)
            L = c["num_hidden_layers"]
            mtp = [k for k in info["unexpected_keys"] if k.startswith(f"model.layers.{L}.")]
            other = sorted(set(info["unexpected_keys"]) - set(mtp))
            bad = list(info["missing_keys"]) + other + [str(x) for x in info["mismatched_keys"]]
            # save_pretrained of the unquantised model vs the unquantised skeleton
            plain = dict(c, quantization_config=None)
            plain.pop("quantization_config")
            cfg = AutoConfig.for_model(**{k: v for k, v in plain.items() if k != "architectures"})
            d2 = os.path.join(env.out, f"names-{model}-saved")
            shutil.rmtree(d2, ignore_errors=True)
            AutoModelForCausalLM.from_config(cfg, **dtype_kw(torch.bfloat16)).save_pretrained(d2)
            saved = {}
            for f in os.listdir(d2):
                if f.endswith(".safetensors"):
                    with safe_open(os.path.join(d2, f), "np") as h:
                        for k in h.keys():
                            sl = h.get_slice(k)
                            saved[k] = (sl.get_dtype(), list(sl.get_shape()))
            mine = {n: (dt, s) for n, dt, s in hf_skeleton.tensors(
                dict(plain, num_nextn_predict_layers=0))}
            names_diff = sorted(set(saved) ^ set(mine))
            shape_diff = sorted(k for k in set(saved) & set(mine) if saved[k][1] != mine[k][1])
            dtype_diff = sorted(k for k in set(saved) & set(mine) if saved[k][0] != mine[k][0])
            detail = ((f"from_pretrained({q} skeleton) not run on the CPU: {skipped[:80]}; "
                       if skipped else
                       f"from_pretrained({q or 'bf16'} skeleton): {len(bad)} missing/unexpected/"
                       f"mismatched {bad[:4]}, {len(mtp)} MTP keys unused; ") + "save_pretrained: "
                      f"{len(saved)} tensors, {len(names_diff)} names and {len(shape_diff)} shapes "
                      f"differ {(names_diff + shape_diff)[:4]}"
                      + (f"; dtype differs (transformers' in-memory choice, not the checkpoint's): "
                         f"{[(k.split('.', 3)[-1], saved[k][0], mine[k][0]) for k in dtype_diff[:2]]}"
                         if dtype_diff else ""))
            status = "FAIL" if bad or names_diff or shape_diff else "SKIP" if skipped else "PASS"
            result(name, status, detail)
        except Exception as e:  # noqa: BLE001
            with open(os.path.join(LOG_DIR, "tracebacks.log"), "a") as f:
                traceback.print_exc(file=f)
            result(name, "FAIL", f"{type(e).__name__}: {str(e)[:400]}")


def guarded(check, fn, *args):
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001
        with open(os.path.join(LOG_DIR, "tracebacks.log"), "a") as f:
            traceback.print_exc(file=f)
        result(check, "FAIL", f"{type(e).__name__}: {str(e)[:500]}")


def main():
    global LOG, LOG_DIR
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--loadplan", default="build/cli/loadplan", help="the loadplan CLI")
    ap.add_argument("--out", required=True, help="folder for models, manifests, logs, results.json")
    ap.add_argument("--only", default="1,2,3,4", help="which checks, e.g. 1,3")
    ap.add_argument("--gpu", type=int, default=0, help="CUDA device index")
    ap.add_argument("--import-args", default="--max-batch 4 --max-ctx 1024",
                    help="added to every `loadplan import` (default: small KV-cache bounds)")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per CLI command")
    ap.add_argument("--emulate", action="store_true", help="no loadplan, no GPU needed (see above)")
    ap.add_argument("--device", default=None, help="torch device (default cuda:GPU; cpu with --emulate)")
    a = ap.parse_args()
    a.device = a.device or ("cpu" if a.emulate else f"cuda:{a.gpu}")
    a.loadplan = os.path.abspath(a.loadplan)
    os.makedirs(a.out, exist_ok=True)
    a.out = os.path.abspath(a.out)
    LOG_DIR = a.out
    LOG = open(os.path.join(a.out, "crosscheck.log"), "w")
    only = set(a.only.split(","))
    env = Env(a)
    log(f"torch {torch.__version__}, device {a.device}, loadplan {a.loadplan}"
        + (" (emulated)" if a.emulate else ""))
    if not a.emulate and not os.access(a.loadplan, os.X_OK):
        log(f"FAIL setup: no loadplan CLI at {a.loadplan}")
        return 1
    if transformers is None:
        log(f"SKIP transformers not importable ({TRANSFORMERS_ERROR}): checks 1 and 2 skipped")
        for c in ("1-llama", "1-qwen3_moe", "2-gpt-oss-mxfp4"):
            result(c, "SKIP", "transformers not importable")
    else:
        log(f"transformers {transformers.__version__}")
    dirs = []
    if transformers is not None and "1" in only:
        for fam in ("llama", "qwen3_moe"):
            guarded(f"1-{fam}", check1, env, fam)
        if "llama" in env.saved:
            dirs.append(("save_pretrained", env.saved["llama"]))
    if transformers is not None and "2" in only:
        guarded("2-gpt-oss-mxfp4", check2, env)
    if transformers is not None and "4" in only:
        check4(env)
    if "3" in only:
        d = os.path.join(a.out, "direct-llama")
        shutil.rmtree(d, ignore_errors=True)
        direct_checkpoint(d)
        dirs.append(("save_file", d))
        guarded("3-run-check", check3, env, dirs)
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump({"transformers": getattr(transformers, "__version__", None),
                   "torch": torch.__version__, "results": RESULTS}, f, indent=2)
    fails = [r for r in RESULTS if r["status"] == "FAIL"]
    passed = sum(r["status"] == "PASS" for r in RESULTS)
    skipped = sum(r["status"] == "SKIP" for r in RESULTS)
    log(f"{passed} passed, {len(fails)} failed, {skipped} skipped")
    if fails:
        return 1
    return 3 if transformers is None else 0


if __name__ == "__main__":
    sys.exit(main())

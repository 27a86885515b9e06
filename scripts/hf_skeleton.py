#!/usr/bin/env python3
"""Hugging Face-style model folders whose safetensors shards hold headers only (sparse data).

    scripts/hf_skeleton.py MODEL OUT_DIR        one model: a name from --list (its config is
                                                tests/data/hf/MODEL/config.json), a config.json
                                                path or a folder holding one
    scripts/hf_skeleton.py --list               the models, their tensors, parameters and bytes
    scripts/hf_skeleton.py --all OUT_ROOT       every model, each into OUT_ROOT/MODEL

OUT_DIR gets config.json (copied), model.safetensors.index.json ({"metadata": {"total_size"},
"weight_map"}) and the shards under the file names each model publishes
(model-00001-of-000163.safetensors, model-1-of-61.safetensors, model-00000-of-00014...).
Each shard is a valid safetensors file, written as the reference writer does (8-byte little-
endian header length, compact JSON header with "__metadata__": {"format": "pt"} first, padded
with spaces to a multiple of 8, tensors in the header in data order, data sorted by dtype
(widest first) then name), but its data section is a hole: the header is written and the file
is truncated to its full size, so DeepSeek-V3's 688 GB take a few seconds and almost no disk.
Only headers can be read (loadplan import reads nothing else); the data reads as zeros.

Tensor names, dtypes and shapes come from config.json per family (model_type), as the
published checkpoints store them (not transformers' in-memory fused parameters): llama,
qwen3, qwen3_moe, mixtral, deepseek_v3 / kimi_k2, gpt_oss. Tensors are taken in natural order
(layers.2 before layers.10) and cut into the published number of shards by size.

Python 3 standard library only (CI has no torch).
"""
import argparse
import json
import math
import os
import re
import shutil
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
CONFIGS = os.path.join(ROOT, "tests", "data", "hf")

DTYPE_BYTES = {"BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1, "I16": 2, "U16": 2,
               "F16": 2, "BF16": 2, "I32": 4, "U32": 4, "F32": 4, "F64": 8, "I64": 8, "U64": 8}
# The reference writer (safetensors' Rust serialize) orders data by its Dtype enum, descending,
# then by name: the declaration order below, so the widest types come first and stay aligned.
DTYPE_RANK = {d: i for i, d in enumerate(
    ["BOOL", "U8", "I8", "F8_E5M2", "F8_E4M3", "I16", "U16", "F16", "BF16", "I32", "U32",
     "F32", "F64", "I64", "U64"])}
TORCH_DTYPES = {"bfloat16": "BF16", "float16": "F16", "float32": "F32"}


# ----- shard file names, as each model publishes them -----

def hf_name(i, n):        # transformers' save_pretrained: model-00001-of-00004.safetensors
    return f"model-{i + 1:05d}-of-{n:05d}.safetensors"


def deepseek_name(i, n):  # DeepSeek-V3: model-00001-of-000163.safetensors (six digits after "of")
    return f"model-{i + 1:05d}-of-{n:06d}.safetensors"


def kimi_name(i, n):      # Kimi-K2: model-1-of-61.safetensors
    return f"model-{i + 1}-of-{n}.safetensors"


def gpt_oss_name(i, n):   # gpt-oss: model-00000-of-00014.safetensors ... model-00014-of-00014
    return f"model-{i:05d}-of-{n - 1:05d}.safetensors"


# name -> (published shard count, naming). Counts as the Hub repositories publish them:
# meta-llama/Llama-3.1-8B(-Instruct) 4, Llama-3.1-70B 30, Qwen/Qwen3-32B 17, Qwen3-30B-A3B 16,
# mistralai/Mixtral-8x7B-v0.1 19, deepseek-ai/DeepSeek-V3 163, moonshotai/Kimi-K2-Instruct 61,
# openai/gpt-oss-20b 3 (00000..00002), gpt-oss-120b 15 (00000..00014).
MODELS = {
    "llama-3.1-8b": (4, hf_name),
    "llama-3.1-70b": (30, hf_name),
    "qwen3-32b": (17, hf_name),
    "qwen3-30b-a3b": (16, hf_name),
    "mixtral-8x7b": (19, hf_name),
    "deepseek-v3": (163, deepseek_name),
    "kimi-k2": (61, kimi_name),
    "gpt-oss-20b": (3, gpt_oss_name),
    "gpt-oss-120b": (15, gpt_oss_name),
}


# ----- tensors per family -----

class Tensors:
    def __init__(self):
        self.items = []

    def add(self, name, dtype, shape):
        self.items.append((name, dtype, [int(s) for s in shape]))


def natural_key(name):
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]


def base_dtype(c):
    return TORCH_DTYPES.get(c.get("torch_dtype") or c.get("dtype") or "bfloat16", "BF16")


def head_dim(c):
    return c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]


def embeddings(t, c, dt):
    t.add("model.embed_tokens.weight", dt, [c["vocab_size"], c["hidden_size"]])
    t.add("model.norm.weight", dt, [c["hidden_size"]])
    if not c.get("tie_word_embeddings", False):
        t.add("lm_head.weight", dt, [c["vocab_size"], c["hidden_size"]])


def gqa_attention(t, p, c, dt, bias=False, qk_norm=False):
    H, hd = c["hidden_size"], head_dim(c)
    nh, nkv = c["num_attention_heads"], c.get("num_key_value_heads") or c["num_attention_heads"]
    for proj, rows in (("q_proj", nh * hd), ("k_proj", nkv * hd), ("v_proj", nkv * hd)):
        t.add(f"{p}.self_attn.{proj}.weight", dt, [rows, H])
        if bias:
            t.add(f"{p}.self_attn.{proj}.bias", dt, [rows])
    t.add(f"{p}.self_attn.o_proj.weight", dt, [H, nh * hd])
    if bias:
        t.add(f"{p}.self_attn.o_proj.bias", dt, [H])
    if qk_norm:
        t.add(f"{p}.self_attn.q_norm.weight", dt, [hd])
        t.add(f"{p}.self_attn.k_norm.weight", dt, [hd])


def norms(t, p, c, dt):
    t.add(f"{p}.input_layernorm.weight", dt, [c["hidden_size"]])
    t.add(f"{p}.post_attention_layernorm.weight", dt, [c["hidden_size"]])


def swiglu(t, p, H, I, dt, bias=False, linear=None):
    add = linear or (lambda name, n, k: t.add(name + ".weight", dt, [n, k]))
    add(f"{p}.gate_proj", I, H)
    add(f"{p}.up_proj", I, H)
    add(f"{p}.down_proj", H, I)
    if bias:
        for proj, n in (("gate_proj", I), ("up_proj", I), ("down_proj", H)):
            t.add(f"{p}.{proj}.bias", dt, [n])


def llama_like(c, qk_norm=False, bias_key="attention_bias"):
    t, dt = Tensors(), base_dtype(c)
    embeddings(t, c, dt)
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}"
        norms(t, p, c, dt)
        gqa_attention(t, p, c, dt, bias=c.get(bias_key, False), qk_norm=qk_norm)
        swiglu(t, f"{p}.mlp", c["hidden_size"], c["intermediate_size"], dt,
               bias=c.get("mlp_bias", False))
    return t


def llama(c):
    return llama_like(c)


def qwen3(c):
    return llama_like(c, qk_norm=True)


def qwen3_moe(c):
    # Qwen3MoeDecoderLayer: sparse when the layer is not in mlp_only_layers, num_experts > 0
    # and (i + 1) % decoder_sparse_step == 0; otherwise a dense MLP of intermediate_size.
    t, dt = Tensors(), base_dtype(c)
    H, E = c["hidden_size"], c["num_experts"]
    embeddings(t, c, dt)
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}"
        norms(t, p, c, dt)
        gqa_attention(t, p, c, dt, bias=c.get("attention_bias", False), qk_norm=True)
        step = c.get("decoder_sparse_step", 1)
        if i not in c.get("mlp_only_layers", []) and E > 0 and (i + 1) % step == 0:
            t.add(f"{p}.mlp.gate.weight", dt, [E, H])
            for j in range(E):
                swiglu(t, f"{p}.mlp.experts.{j}", H, c["moe_intermediate_size"], dt)
        else:
            swiglu(t, f"{p}.mlp", H, c["intermediate_size"], dt)
    return t


def mixtral(c):
    t, dt = Tensors(), base_dtype(c)
    H, I, E = c["hidden_size"], c["intermediate_size"], c["num_local_experts"]
    embeddings(t, c, dt)
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}"
        norms(t, p, c, dt)
        gqa_attention(t, p, c, dt)
        t.add(f"{p}.block_sparse_moe.gate.weight", dt, [E, H])
        for j in range(E):
            q = f"{p}.block_sparse_moe.experts.{j}"
            t.add(f"{q}.w1.weight", dt, [I, H])
            t.add(f"{q}.w2.weight", dt, [H, I])
            t.add(f"{q}.w3.weight", dt, [I, H])
    return t


def deepseek_v3(c):
    """DeepSeek-V3 (and Kimi-K2, model_type kimi_k2, same layout).

    FP8 (quantization_config.quant_method "fp8"): every linear layer of the decoder (MLA
    projections, dense MLPs, routed and shared experts) is F8_E4M3 with `weight_scale_inv`
    F32 [ceil(N/128), ceil(K/128)]; norms, embed_tokens, lm_head and mlp.gate stay BF16,
    mlp.gate.e_score_correction_bias is F32. The MTP layers (num_nextn_predict_layers, stored
    as model.layers.{L}...) add embed_tokens, enorm, hnorm, eh_proj, shared_head.{norm,head}
    to a full MoE decoder layer. Not verified against the published headers (from memory):
    eh_proj is taken as BF16 without a scale (vLLM's DeepSeekMTP builds it as a plain,
    unquantised nn.Linear), and the MTP layer's embed_tokens / shared_head.head as BF16
    copies of the vocabulary matrices.
    """
    t, dt = Tensors(), base_dtype(c)
    H, V, nh = c["hidden_size"], c["vocab_size"], c["num_attention_heads"]
    nope, rope, vd = c["qk_nope_head_dim"], c["qk_rope_head_dim"], c["v_head_dim"]
    qr, kvr = c.get("q_lora_rank"), c["kv_lora_rank"]
    q = c.get("quantization_config") or {}
    fp8 = q.get("quant_method") == "fp8"
    bn, bk = q.get("weight_block_size", [128, 128])

    def linear(name, n, k):
        if fp8:
            t.add(name + ".weight", "F8_E4M3", [n, k])
            t.add(name + ".weight_scale_inv", "F32", [math.ceil(n / bn), math.ceil(k / bk)])
        else:
            t.add(name + ".weight", dt, [n, k])

    E, moe_I = c["n_routed_experts"], c["moe_intermediate_size"]
    first_dense, freq = c.get("first_k_dense_replace", 0), c.get("moe_layer_freq", 1)
    L, mtp = c["num_hidden_layers"], c.get("num_nextn_predict_layers", 0) or 0
    embeddings(t, c, dt)
    for i in range(L + mtp):
        p = f"model.layers.{i}"
        norms(t, p, c, dt)
        a = f"{p}.self_attn"
        if qr:
            linear(f"{a}.q_a_proj", qr, H)
            t.add(f"{a}.q_a_layernorm.weight", dt, [qr])
            linear(f"{a}.q_b_proj", nh * (nope + rope), qr)
        else:
            linear(f"{a}.q_proj", nh * (nope + rope), H)
        linear(f"{a}.kv_a_proj_with_mqa", kvr + rope, H)
        t.add(f"{a}.kv_a_layernorm.weight", dt, [kvr])
        linear(f"{a}.kv_b_proj", nh * (nope + vd), kvr)
        linear(f"{a}.o_proj", H, nh * vd)
        if E and i >= first_dense and i % freq == 0:
            t.add(f"{p}.mlp.gate.weight", dt, [E, H])
            if c.get("topk_method") == "noaux_tc":
                t.add(f"{p}.mlp.gate.e_score_correction_bias", "F32", [E])
            for j in range(E):
                swiglu(t, f"{p}.mlp.experts.{j}", H, moe_I, dt, linear=linear)
            if c.get("n_shared_experts"):
                swiglu(t, f"{p}.mlp.shared_experts", H, moe_I * c["n_shared_experts"], dt,
                       linear=linear)
        else:
            swiglu(t, f"{p}.mlp", H, c["intermediate_size"], dt, linear=linear)
        if i >= L:  # multi-token prediction
            t.add(f"{p}.embed_tokens.weight", dt, [V, H])
            t.add(f"{p}.enorm.weight", dt, [H])
            t.add(f"{p}.hnorm.weight", dt, [H])
            t.add(f"{p}.eh_proj.weight", dt, [H, 2 * H])
            t.add(f"{p}.shared_head.norm.weight", dt, [H])
            t.add(f"{p}.shared_head.head.weight", dt, [V, H])
    return t


def gpt_oss(c):
    """gpt-oss: attention with biases and per-head sinks, a biased router, and experts as
    MXFP4 (quantization_config.quant_method "mxfp4"): *_blocks U8 [E, N, K/32, 16] (two FP4
    E2M1 values a byte, 32 a block) and *_scales U8 [E, N, K/32] (E8M0), biases BF16. Without
    mxfp4, the dequantised BF16 gate_up_proj [E, H, 2I] / down_proj [E, I, H] (transformers'
    layout) are written instead."""
    t, dt = Tensors(), base_dtype(c)
    H, I, E = c["hidden_size"], c["intermediate_size"], c["num_local_experts"]
    mxfp4 = (c.get("quantization_config") or {}).get("quant_method") == "mxfp4"
    embeddings(t, c, dt)
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}"
        norms(t, p, c, dt)
        gqa_attention(t, p, c, dt, bias=c.get("attention_bias", True))
        t.add(f"{p}.self_attn.sinks", dt, [c["num_attention_heads"]])
        t.add(f"{p}.mlp.router.weight", dt, [E, H])
        t.add(f"{p}.mlp.router.bias", dt, [E])
        x = f"{p}.mlp.experts"
        if mxfp4:
            t.add(f"{x}.gate_up_proj_blocks", "U8", [E, 2 * I, H // 32, 16])
            t.add(f"{x}.gate_up_proj_scales", "U8", [E, 2 * I, H // 32])
            t.add(f"{x}.down_proj_blocks", "U8", [E, H, I // 32, 16])
            t.add(f"{x}.down_proj_scales", "U8", [E, H, I // 32])
        else:
            t.add(f"{x}.gate_up_proj", dt, [E, H, 2 * I])
            t.add(f"{x}.down_proj", dt, [E, I, H])
        t.add(f"{x}.gate_up_proj_bias", dt, [E, 2 * I])
        t.add(f"{x}.down_proj_bias", dt, [E, H])
    return t


FAMILIES = {"llama": llama, "qwen3": qwen3, "qwen3_moe": qwen3_moe, "mixtral": mixtral,
            "deepseek_v3": deepseek_v3, "kimi_k2": deepseek_v3, "gpt_oss": gpt_oss}


def tensors(config):
    """[(name, dtype, shape)] of the checkpoint config describes, in natural order."""
    mt = config.get("model_type")
    if mt not in FAMILIES:
        raise SystemExit(f"hf_skeleton: model_type {mt!r} is not one of {sorted(FAMILIES)}")
    items = FAMILIES[mt](config).items
    names = [n for n, _, _ in items]
    assert len(set(names)) == len(names), "duplicate tensor names"
    return sorted(items, key=lambda it: natural_key(it[0]))


def nbytes(dtype, shape):
    return DTYPE_BYTES[dtype] * math.prod(shape)


def parameters(items):
    """Parameters as the model cards count them: one per element, except MXFP4 *_blocks
    (two FP4 values a byte) and their *_scales (one E8M0 per 32 values: not parameters).
    FP8 weight_scale_inv (F32) count one each, as the Hub's safetensors parameter count does."""
    total = 0
    for name, dtype, shape in items:
        n = math.prod(shape)
        if dtype == "U8" and name.endswith("_blocks"):
            total += 2 * n
        elif dtype == "U8" and name.endswith("_scales"):
            continue
        else:
            total += n
    return total


# ----- writing -----

def split(items, count):
    """Cut items (in order) into `count` consecutive non-empty shards of about equal bytes."""
    count = max(1, min(count, len(items)))
    sizes = [nbytes(d, s) for _, d, s in items]
    total = sum(sizes)
    starts, cum = [], 0
    for s in sizes:
        starts.append(cum)
        cum += s
    cuts = [0]
    for k in range(1, count):
        target = total * k / count
        i = max(cuts[-1] + 1, next((j for j, st in enumerate(starts) if st >= target), len(items)))
        cuts.append(min(i, len(items) - (count - k)))
    cuts.append(len(items))
    return [items[cuts[k]:cuts[k + 1]] for k in range(count)]


def header_bytes(shard):
    """The safetensors header of shard (list of (name, dtype, shape)) and its data size."""
    order = sorted(shard, key=lambda it: (-DTYPE_RANK[it[1]], it[0]))
    header, off = {"__metadata__": {"format": "pt"}}, 0
    for name, dtype, shape in order:
        n = nbytes(dtype, shape)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [off, off + n]}
        off += n
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text, off


def write_shard(path, shard):
    head, data = header_bytes(shard)
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(len(head) + data)  # the data section is a hole: no blocks allocated
    return data


def write(config, out_dir, shards=None, naming=hf_name, shard_bytes=5 * 10**9, config_path=None):
    """Write the skeleton of config into out_dir; returns a summary dict."""
    items = tensors(config)
    total = sum(nbytes(d, s) for _, d, s in items)
    if shards is None:
        shards = max(1, math.ceil(total / shard_bytes))
    os.makedirs(out_dir, exist_ok=True)
    if config_path:
        shutil.copyfile(config_path, os.path.join(out_dir, "config.json"))
    else:
        with open(os.path.join(out_dir, "config.json"), "w") as f:
            json.dump(config, f, indent=2)
            f.write("\n")
    parts = split(items, shards)
    weight_map = {}
    if len(parts) == 1 and naming is hf_name:  # transformers writes one file without an index
        write_shard(os.path.join(out_dir, "model.safetensors"), parts[0])
        files = ["model.safetensors"]
    else:
        files = []
        for k, part in enumerate(parts):
            file = naming(k, len(parts))
            write_shard(os.path.join(out_dir, file), part)
            files.append(file)
            for name, _, _ in part:
                weight_map[name] = file
        index = {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}
        with open(os.path.join(out_dir, "model.safetensors.index.json"), "w") as f:
            json.dump(index, f, indent=2)
            f.write("\n")
    return {"dir": out_dir, "tensors": len(items), "bytes": total, "shards": files,
            "parameters": parameters(items)}


def model_config(model):
    """(config dict, config path, shard count or None, naming) for a name, file or folder."""
    if model in MODELS:
        path = os.path.join(CONFIGS, model, "config.json")
        count, naming = MODELS[model]
    else:
        path = os.path.join(model, "config.json") if os.path.isdir(model) else model
        if not os.path.isfile(path):
            raise SystemExit(f"hf_skeleton: {model!r} is neither a model ({', '.join(MODELS)}) "
                             "nor a config.json")
        count, naming = None, hf_name
    with open(path) as f:
        return json.load(f), path, count, naming


def cut_layers(config, layers):
    """config with its first LAYERS decoder layers (num_hidden_layers, layer_types): a model's
    shape at a size one machine holds."""
    have = config["num_hidden_layers"]
    if not 1 <= layers <= have:
        raise SystemExit(f"hf_skeleton: --layers {layers}: the model has 1 to {have} layers")
    cut = {**config, "num_hidden_layers": layers}
    if "layer_types" in cut:
        cut["layer_types"] = cut["layer_types"][:layers]
    return cut


def make(model, out_dir, shards=None, shard_bytes=5 * 10**9, layers=None):
    config, path, count, naming = model_config(model)
    if layers is not None:  # its own config.json, shards by size (the published count was whole)
        config, path, count = cut_layers(config, layers), None, None
    return write(config, out_dir, shards=shards or count, naming=naming,
                 shard_bytes=shard_bytes, config_path=path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="models: " + ", ".join(MODELS))
    ap.add_argument("model", nargs="?", help="a model name (--list), a config.json or its folder")
    ap.add_argument("out_dir", nargs="?", help="output folder (created)")
    ap.add_argument("--list", action="store_true", help="list the models and exit")
    ap.add_argument("--all", metavar="OUT_ROOT", help="write every model into OUT_ROOT/MODEL")
    ap.add_argument("--shards", type=int, help="number of shards (default: as published; "
                    "for a config file: total bytes / --shard-bytes)")
    ap.add_argument("--shard-bytes", type=int, default=5 * 10**9,
                    help="shard size for a config file without --shards (default 5e9)")
    ap.add_argument("--layers", type=int,
                    help="the first N decoder layers only (config.json says N; shards by size)")
    a = ap.parse_args(argv)
    if a.list:
        print(f"{'model':16} {'type':12} {'tensors':>8} {'params':>16} {'bytes':>16} shards")
        for name in MODELS:
            config, _, count, naming = model_config(name)
            items = tensors(config)
            print(f"{name:16} {config['model_type']:12} {len(items):8} {parameters(items):16,} "
                  f"{sum(nbytes(d, s) for _, d, s in items):16,} {count} ({naming(0, count)})")
        return 0
    if a.all:
        for name in MODELS:
            r = make(name, os.path.join(a.all, name))
            print(f"{r['dir']}: {r['tensors']} tensors, {r['bytes'] / 1e9:.2f} GB, "
                  f"{len(r['shards'])} shards")
        return 0
    if not a.model or not a.out_dir:
        ap.error("MODEL and OUT_DIR are required (or --list, or --all OUT_ROOT)")
    r = make(a.model, a.out_dir, shards=a.shards, shard_bytes=a.shard_bytes, layers=a.layers)
    print(f"{r['dir']}: {r['tensors']} tensors, {r['parameters']:,} parameters, "
          f"{r['bytes'] / 1e9:.2f} GB in {len(r['shards'])} shards")
    return 0


if __name__ == "__main__":
    sys.exit(main())

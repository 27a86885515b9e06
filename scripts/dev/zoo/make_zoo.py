#!/usr/bin/env python3
"""Builds every causal-LM model_type of the installed transformers small (one generic config:
hidden 64, 2 layers, 4 heads, vocabulary 256, 4 experts), saves each as sharded safetensors
(``save_pretrained``) and records what transformers itself does with it: the tensors it saved,
the parameters and buffers its model holds (the layout loadplan's ``--layout transformers``
must produce), tied parameters, and the cache after a prefill.

    python3 scripts/dev/zoo/make_zoo.py OUT_DIR [--types llama,qwen3_moe] [--deadline-s 420]

Writes OUT_DIR/<model_type>/ (config.json, model.safetensors.index.json, shards) and
OUT_DIR/zoo.json ({model_type: record}). Needs torch and transformers (the GPU machine has
both); runs on the CPU. docs/models.md says what the zoo is for.
"""
from __future__ import annotations

import argparse
import json
import os
import struct
import sys
import time
import traceback

SMALL = {
    "hidden_size": 64, "num_hidden_layers": 4, "num_attention_heads": 4,
    "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 128, "vocab_size": 256,
    "max_position_embeddings": 512,
    # mixture of experts
    "num_experts": 4, "num_local_experts": 4, "n_routed_experts": 4, "num_experts_per_tok": 2,
    "moe_intermediate_size": 32, "shared_expert_intermediate_size": 64,
    "first_k_dense_replace": 1, "n_group": 1, "topk_group": 1, "moe_layer_freq": 1,
    # multi-head latent attention
    "kv_lora_rank": 32, "q_lora_rank": 48, "qk_rope_head_dim": 8, "qk_nope_head_dim": 16,
    "v_head_dim": 16,
    # sliding windows and patterns
    "sliding_window": 16, "sliding_window_pattern": 2,
    # state-space / linear attention
    "mamba_d_state": 16, "mamba_n_heads": 4, "mamba_d_head": 32, "mamba_d_conv": 4,
    "mamba_n_groups": 1, "linear_num_key_heads": 2, "linear_num_value_heads": 4,
    "linear_key_head_dim": 16, "linear_value_head_dim": 16, "linear_conv_kernel_dim": 4,
    # MTP: transformers does not build it (the saved checkpoint has none)
    "num_nextn_predict_layers": 1,
    # other spellings of the same sizes (GPT-2, BART, T5-style and older classes)
    "n_embd": 64, "n_layer": 2, "n_head": 4, "n_inner": 128, "n_positions": 512,
    "d_model": 64, "num_layers": 2, "num_heads": 4, "d_ff": 128, "d_kv": 16, "ffn_dim": 128,
    "encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 4,
    "decoder_attention_heads": 4, "encoder_ffn_dim": 128, "decoder_ffn_dim": 128,
    "num_decoder_layers": 2, "hidden_dim": 64, "embed_dim": 64, "n_embed": 64,
    "max_seq_len": 512, "seq_length": 512, "rotary_dim": 8,
    # token ids inside the small vocabulary
    "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2, "decoder_start_token_id": 2,
    # hybrids: an attention layer among the first four
    "full_attention_interval": 2, "attn_layer_period": 2, "attn_layer_offset": 1,
    "mamba_d_ssm": 128, "expand": 1,
}


MAX_PARAMETERS = 20_000_000


def small_kwargs(defaults: dict) -> dict:
    kw = {k: v for k, v in SMALL.items() if k in defaults}
    if "kv_lora_rank" in defaults:  # MLA: head_dim is the rope part; one KV head per head
        if "head_dim" in kw:
            kw["head_dim"] = SMALL["qk_rope_head_dim"]
        if "num_key_value_heads" in kw:
            kw["num_key_value_heads"] = SMALL["num_attention_heads"]
    for sub in ("text_config",):
        if isinstance(defaults.get(sub), dict):
            kw[sub] = small_kwargs(defaults[sub])
    return kw


def headers(folder: str) -> dict:
    out = {}
    for f in sorted(os.listdir(folder)):
        if not f.endswith(".safetensors"):
            continue
        with open(os.path.join(folder, f), "rb") as fh:
            n = struct.unpack("<Q", fh.read(8))[0]
            h = json.loads(fh.read(n))
        for name, v in h.items():
            if name != "__metadata__":
                out[name] = {"dtype": v["dtype"], "shape": v["shape"], "file": f}
    return out


def tensors_of(model) -> dict:
    params = {n: {"shape": list(p.shape), "dtype": str(p.dtype).replace("torch.", ""),
                  "kind": "parameter", "ptr": p.data_ptr()}
              for n, p in model.named_parameters(remove_duplicate=False)}
    persistent = set(model.state_dict().keys())
    for n, b in model.named_buffers(remove_duplicate=False):
        params[n] = {"shape": list(b.shape), "dtype": str(b.dtype).replace("torch.", ""),
                     "kind": "buffer" if n in persistent else "nonpersistent", "ptr": b.data_ptr()}
    ptrs = {}
    for n, v in params.items():
        ptrs.setdefault(v.pop("ptr"), []).append(n)
    tied = [sorted(v) for v in ptrs.values() if len(v) > 1]
    return {"tensors": params, "tied": tied, "state_dict": sorted(model.state_dict().keys())}


def cache_of(cache) -> list:
    layers = getattr(cache, "layers", None)
    out = []
    if layers is None:
        return [{"type": type(cache).__name__}]
    for layer in layers:
        rec = {"type": type(layer).__name__}
        for k, v in vars(layer).items():
            if hasattr(v, "shape") and hasattr(v, "dtype"):
                rec[k] = {"shape": list(v.shape), "dtype": str(v.dtype).replace("torch.", "")}
            elif isinstance(v, (list, tuple, dict)) and not k.startswith("_"):
                items = v.values() if isinstance(v, dict) else v
                ts = [{"shape": list(x.shape), "dtype": str(x.dtype).replace("torch.", "")}
                      for x in items if hasattr(x, "shape") and hasattr(x, "dtype")]
                if ts:
                    rec[k] = ts
            elif isinstance(v, (int, float, bool, str)) and not k.startswith("_"):
                rec[k] = v
        out.append(rec)
    return out


def one(rec: dict, mt: str, out_dir: str, torch) -> dict:
    from transformers import CONFIG_MAPPING, AutoModelForCausalLM
    cls = CONFIG_MAPPING[mt]
    defaults = cls().to_dict()
    cfg = cls(**small_kwargs(defaults))
    rec["stage"] = "build"
    with torch.device("meta"):  # the size first: a family the generic config leaves large
        meta = AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16)
    rec["parameters"] = sum(p.numel() for p in meta.parameters())
    del meta
    if rec["parameters"] > MAX_PARAMETERS:
        raise ValueError(f"the generic small config leaves {rec['parameters']} parameters "
                         f"(over {MAX_PARAMETERS})")
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16)
    model.eval()
    rec["class"] = type(model).__name__
    rec["model"] = tensors_of(model)
    rec["stage"] = "save"
    folder = os.path.join(out_dir, mt)
    model.save_pretrained(folder, max_shard_size="200KB")
    rec["saved"] = headers(folder)
    rec["stage"] = "forward"
    ids = torch.tensor([[1, 5, 9, 13, 17, 21, 25, 29]])
    with torch.no_grad():
        out = model(input_ids=ids, use_cache=True)
    cache = getattr(out, "past_key_values", None) or getattr(out, "cache_params", None)
    rec["cache_class"] = type(cache).__name__ if cache is not None else None
    rec["cache"] = cache_of(cache) if cache is not None else []
    rec["stage"] = "reload"
    again = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.bfloat16)
    again.eval()
    with torch.no_grad():
        out2 = again(input_ids=ids, use_cache=False)
    rec["roundtrip_equal"] = bool(torch.equal(out.logits, out2.logits))
    rec["stage"] = "done"
    return rec


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--types", default="")
    ap.add_argument("--deadline-s", type=float, default=420)
    a = ap.parse_args()
    import torch
    import transformers
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    torch.set_num_threads(4)
    os.makedirs(a.out, exist_ok=True)
    types = [t for t in a.types.split(",") if t] or sorted(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES)
    zoo = {"transformers": transformers.__version__, "torch": torch.__version__, "models": {}}
    old = os.path.join(a.out, "zoo.json")
    if a.types and os.path.exists(old):  # a re-run of some types keeps the others' records
        zoo["models"] = json.load(open(old))["models"]
    start = time.time()
    for mt in types:
        if time.time() - start > a.deadline_s:
            zoo["models"][mt] = {"model_type": mt, "stage": "deadline", "error": "not reached"}
            continue
        t0 = time.time()
        rec = {"model_type": mt, "stage": "config"}
        try:
            one(rec, mt, a.out, torch)
        except Exception as e:  # one family's failure is recorded, never the zoo's
            rec["error"] = f"{type(e).__name__}: {e}"[:600]
            rec["trace"] = traceback.format_exc()[-1500:]
        rec["seconds"] = round(time.time() - t0, 3)
        zoo["models"][mt] = rec
        print(f"{mt}: {rec.get('stage')} {rec.get('error', '')[:120]} {rec['seconds']} s", flush=True)
    with open(os.path.join(a.out, "zoo.json"), "w") as f:
        json.dump(zoo, f, indent=1, sort_keys=True)
    done = sum(1 for r in zoo["models"].values() if r.get("stage") == "done")
    print(f"{done} of {len(zoo['models'])} built, saved, run and reloaded", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

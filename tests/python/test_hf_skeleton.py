"""scripts/hf_skeleton.py: Hugging Face-style model folders with header-only (sparse) shards.

No torch and no loadplan package: the shards are read back with the reference `safetensors`
package (headers only) and the index is checked against them."""

import importlib.util
import json
import math
import os
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "hf_skeleton.py"
spec = importlib.util.spec_from_file_location("hf_skeleton", SCRIPT)
hf = importlib.util.module_from_spec(spec)
spec.loader.exec_module(hf)

safetensors = pytest.importorskip("safetensors")

# Published parameter counts (model cards; DeepSeek-V3: 671B + 14B MTP as the Hub's
# safetensors count shows it, FP8 scales included; gpt-oss: MXFP4 blocks two per byte).
PUBLISHED = {
    "llama-3.1-8b": 8.03e9, "llama-3.1-70b": 70.6e9, "qwen3-32b": 32.8e9,
    "qwen3-30b-a3b": 30.5e9, "mixtral-8x7b": 46.7e9, "deepseek-v3": 684.5e9,
    "kimi-k2": 1.03e12, "gpt-oss-20b": 21e9, "gpt-oss-120b": 117e9,
}
FIRST_SHARD = {
    "llama-3.1-8b": "model-00001-of-00004.safetensors",
    "llama-3.1-70b": "model-00001-of-00030.safetensors",
    "qwen3-32b": "model-00001-of-00017.safetensors",
    "qwen3-30b-a3b": "model-00001-of-00016.safetensors",
    "mixtral-8x7b": "model-00001-of-00019.safetensors",
    "deepseek-v3": "model-00001-of-000163.safetensors",
    "kimi-k2": "model-1-of-61.safetensors",
    "gpt-oss-20b": "model-00000-of-00002.safetensors",
    "gpt-oss-120b": "model-00000-of-00014.safetensors",
}


def test_every_model_has_a_committed_config():
    assert sorted(hf.MODELS) == sorted(PUBLISHED)
    for name in hf.MODELS:
        c = json.loads((ROOT / "tests" / "data" / "hf" / name / "config.json").read_text())
        assert c["model_type"] in hf.FAMILIES and c["architectures"]


@pytest.mark.parametrize("name", list(hf.MODELS))
def test_skeleton(tmp_path, name):
    t0 = time.monotonic()
    r = hf.make(name, str(tmp_path))
    elapsed = time.monotonic() - t0
    count, _ = hf.MODELS[name]
    index = json.loads((tmp_path / "model.safetensors.index.json").read_text())
    files = sorted(set(index["weight_map"].values()))
    assert len(files) == count and FIRST_SHARD[name] in files
    assert sorted(p.name for p in tmp_path.glob("*.safetensors")) == files
    assert (tmp_path / "config.json").read_bytes() == (
        ROOT / "tests" / "data" / "hf" / name / "config.json").read_bytes()

    seen, total, blocks, allowed = {}, 0, 0, 0
    for file in files:
        path = tmp_path / file
        raw = path.open("rb").read(8)
        (n,) = struct.unpack("<Q", raw)
        assert n % 8 == 0
        head = json.loads(path.open("rb").read(8 + n)[8:])
        assert head.pop("__metadata__") == {"format": "pt"}
        spans = sorted(v["data_offsets"] for v in head.values())
        assert spans[0][0] == 0 and all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
        st = path.stat()
        assert st.st_size == 8 + n + spans[-1][1]
        blocks += st.st_blocks
        allowed += -(-(8 + n) // 4096) * 4096 + 4096  # the header's pages, one spare
        with safetensors.safe_open(str(path), "np") as f:  # the reference parser: header only
            for key in f.keys():
                s = f.get_slice(key)
                shape, dtype = list(s.get_shape()), s.get_dtype()
                assert key not in seen
                seen[key] = file
                assert head[key]["shape"] == shape and head[key]["dtype"] == dtype
                total += hf.nbytes(dtype, shape)
    assert seen == index["weight_map"]  # every tensor once, where the index says
    assert index["metadata"]["total_size"] == total == r["bytes"]

    items = hf.tensors(json.loads((tmp_path / "config.json").read_text()))
    assert len(items) == len(seen)
    params = hf.parameters(items)
    assert abs(params / PUBLISHED[name] - 1) < 0.02, f"{params:,} vs {PUBLISHED[name]:,}"
    # sparse: the data is a hole, only the header's pages are allocated (st_blocks: 512 bytes)
    assert blocks * 512 <= allowed, (blocks * 512, allowed)
    assert elapsed < 10, f"{elapsed:.1f}s"


def test_deepseek_v3_is_fast_and_sparse(tmp_path):
    t0 = time.monotonic()
    r = hf.make("deepseek-v3", str(tmp_path))
    elapsed = time.monotonic() - t0
    assert len(r["shards"]) == 163 and r["bytes"] > 680e9
    used = sum(p.stat().st_blocks * 512 for p in tmp_path.iterdir())
    assert used < 64 * 2**20, used  # ~688 GB apparent, a few MB of headers on disk
    assert elapsed < 5, f"{elapsed:.1f}s"


def names(model):
    return {n: (d, s) for n, d, s in hf.tensors(hf.model_config(model)[0])}


def test_family_details():
    ds = names("deepseek-v3")
    H = 7168
    assert ds["model.layers.0.mlp.gate_proj.weight"] == ("F8_E4M3", [18432, H])
    assert ds["model.layers.0.mlp.gate_proj.weight_scale_inv"] == ("F32", [144, 56])
    assert "model.layers.3.mlp.gate_proj.weight" not in ds  # first_k_dense_replace 3
    assert ds["model.layers.3.mlp.gate.weight"] == ("BF16", [256, H])
    assert ds["model.layers.3.mlp.gate.e_score_correction_bias"] == ("F32", [256])
    assert ds["model.layers.3.mlp.experts.255.down_proj.weight"] == ("F8_E4M3", [H, 2048])
    assert ds["model.layers.3.mlp.shared_experts.up_proj.weight_scale_inv"] == ("F32", [16, 56])
    assert ds["model.layers.0.self_attn.q_b_proj.weight"] == ("F8_E4M3", [128 * 192, 1536])
    assert ds["model.layers.0.self_attn.kv_a_proj_with_mqa.weight_scale_inv"] == ("F32", [5, 56])
    assert ds["model.layers.0.self_attn.kv_b_proj.weight"] == ("F8_E4M3", [128 * 256, 512])
    assert ds["model.layers.0.self_attn.o_proj.weight"] == ("F8_E4M3", [H, 128 * 128])
    assert ds["model.layers.61.eh_proj.weight"] == ("BF16", [H, 2 * H])
    assert ds["model.layers.61.shared_head.head.weight"] == ("BF16", [129280, H])
    assert "model.layers.62.input_layernorm.weight" not in ds
    kimi = names("kimi-k2")
    assert "model.layers.61.input_layernorm.weight" not in kimi  # no MTP
    assert kimi["model.layers.1.mlp.experts.383.gate_proj.weight"] == ("F8_E4M3", [2048, H])
    assert "model.layers.1.mlp.gate_proj.weight" not in kimi  # first_k_dense_replace 1

    g = names("gpt-oss-120b")
    assert g["model.layers.0.mlp.experts.gate_up_proj_blocks"] == ("U8", [128, 5760, 90, 16])
    assert g["model.layers.0.mlp.experts.gate_up_proj_scales"] == ("U8", [128, 5760, 90])
    assert g["model.layers.0.mlp.experts.down_proj_blocks"] == ("U8", [128, 2880, 90, 16])
    assert g["model.layers.0.mlp.experts.down_proj_bias"] == ("BF16", [128, 2880])
    assert g["model.layers.0.self_attn.sinks"] == ("BF16", [64])
    assert g["model.layers.0.self_attn.q_proj.bias"] == ("BF16", [4096])
    assert g["model.layers.35.mlp.router.bias"] == ("BF16", [128])

    q = names("qwen3-30b-a3b")
    assert q["model.layers.0.self_attn.q_norm.weight"] == ("BF16", [128])
    assert q["model.layers.0.mlp.experts.127.down_proj.weight"] == ("BF16", [2048, 768])
    m = names("mixtral-8x7b")
    assert m["model.layers.31.block_sparse_moe.experts.7.w2.weight"] == ("BF16", [4096, 14336])


def test_tied_embeddings_have_no_lm_head(tmp_path):
    c, _, _, _ = hf.model_config("llama-3.1-8b")
    c = dict(c, tie_word_embeddings=True)
    assert "lm_head.weight" not in {n for n, _, _ in hf.tensors(c)}
    assert "lm_head.weight" in names("llama-3.1-8b")


def test_natural_order_and_split():
    order = [n for n, _, _ in hf.tensors(hf.model_config("llama-3.1-8b")[0])]
    assert order.index("model.layers.2.mlp.up_proj.weight") < order.index(
        "model.layers.10.mlp.up_proj.weight")
    items = [(f"t{i}", "BF16", [i + 1]) for i in range(10)]
    parts = hf.split(items, 4)
    assert len(parts) == 4 and all(parts) and sum(parts, []) == items
    assert len(hf.split(items, 20)) == 10


def test_cli(tmp_path):
    run = lambda *a: subprocess.run([sys.executable, str(SCRIPT), *map(str, a)],
                                    capture_output=True, text=True)
    out = run("--list")
    assert out.returncode == 0 and "deepseek-v3" in out.stdout
    out = run("gpt-oss-20b", tmp_path / "g")
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "g" / "model-00002-of-00002.safetensors").exists()
    # a config file of one's own: one shard without an index, as save_pretrained writes it
    c = json.loads((ROOT / "tests" / "data" / "hf" / "llama-3.1-8b" / "config.json").read_text())
    c.update(hidden_size=64, intermediate_size=128, num_hidden_layers=2, vocab_size=100,
             num_attention_heads=4, num_key_value_heads=2)
    (tmp_path / "tiny").mkdir()
    (tmp_path / "tiny" / "config.json").write_text(json.dumps(c))
    out = run(tmp_path / "tiny" / "config.json", tmp_path / "t")
    assert out.returncode == 0, out.stderr
    assert [p.name for p in (tmp_path / "t").glob("*.safetensors")] == ["model.safetensors"]
    out = run(tmp_path / "tiny", tmp_path / "t2", "--shards", 3)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "t2" / "model-00003-of-00003.safetensors").exists()
    assert run("no-such-model", tmp_path / "x").returncode != 0
    # --layers: the first N decoder layers, config.json saying so, shards by size
    out = run("llama-3.1-70b", tmp_path / "l16", "--layers", 16)
    assert out.returncode == 0, out.stderr
    assert json.loads((tmp_path / "l16" / "config.json").read_text())["num_hidden_layers"] == 16
    index = json.loads((tmp_path / "l16" / "model.safetensors.index.json").read_text())
    layers = {n.split(".")[2] for n in index["weight_map"] if n.startswith("model.layers.")}
    assert layers == {str(i) for i in range(16)}
    assert len(set(index["weight_map"].values())) == 7  # 31.6 GB in 5 GB shards, not 30
    out = run("gpt-oss-20b", tmp_path / "g2", "--layers", 2)
    assert out.returncode == 0, out.stderr
    assert len(json.loads((tmp_path / "g2" / "config.json").read_text())["layer_types"]) == 2
    bad = run("llama-3.1-8b", tmp_path / "x", "--layers", 33)
    assert bad.returncode != 0 and "1 to 32 layers" in bad.stderr

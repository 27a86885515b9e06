"""loadplan.transformers without a GPU: a clear error when torch or transformers is missing;
where both are installed, transformers' own small models saved as safetensors, imported with
layout="transformers", their tensors read as the manifest binds them (stacked experts: the
tensors one after another) and attached to the meta model give logits torch.equal to
transformers' from_pretrained. The GPU path (loadplan.load) runs in scripts/gpu/gpu-check's zoo."""

import importlib.util
import json
import os

import pytest

import loadplan
import loadplan.transformers as lt

HAVE_TORCH = importlib.util.find_spec("torch") is not None
HAVE_TRANSFORMERS = importlib.util.find_spec("transformers") is not None


@pytest.mark.skipif(HAVE_TORCH and HAVE_TRANSFORMERS, reason="torch and transformers are installed")
def test_without_transformers_the_error_says_what_to_install(tmp_path):
    with pytest.raises(lt.TransformersError, match="pip install torch transformers"):
        lt.from_pretrained(tmp_path)
    assert issubclass(lt.TransformersError, loadplan.LoadplanError)


needs_both = pytest.mark.skipif(not (HAVE_TORCH and HAVE_TRANSFORMERS),
                                reason="needs torch and transformers")

SMALL = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
         "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 128, "vocab_size": 256,
         "max_position_embeddings": 512, "num_experts": 4, "num_local_experts": 4,
         "num_experts_per_tok": 2, "moe_intermediate_size": 32, "pad_token_id": 0,
         "bos_token_id": 1, "eos_token_id": 2}


def _save(model_type, folder):
    import torch
    import transformers
    cls = transformers.CONFIG_MAPPING[model_type]
    defaults = cls().to_dict()
    cfg = cls(**{k: v for k, v in SMALL.items() if k in defaults})
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16)
    model.save_pretrained(folder, max_shard_size="100KB")
    return folder


def _bound(manifest, folder):
    import torch
    from safetensors import safe_open
    stored = {}
    for f in os.listdir(folder):
        if f.endswith(".safetensors"):
            with safe_open(os.path.join(folder, f), "pt") as h:
                stored.update({k: h.get_tensor(k) for k in h.keys()})
    out = {}
    for name, b in manifest["buffers"].items():
        parts = b.get("tensors") or ([b["tensor"]] if "tensor" in b else [])
        if parts:
            out[name] = torch.cat([stored[p].reshape(-1) for p in parts]).reshape(b["shape"])
    return out, stored


@needs_both
@pytest.mark.parametrize("early", [True, False], ids=["buffers-while-loading", "buffers-after"])
@pytest.mark.parametrize("model_type", ["llama", "qwen3_moe", "mixtral", "gemma2", "falcon_h1"])
def test_the_manifests_tensors_make_transformers_own_model(tmp_path, model_type, early):
    import torch
    import transformers
    folder = _save(model_type, str(tmp_path / model_type))
    imported = loadplan.import_model(folder, layout="transformers")
    manifest = json.loads(imported.manifest)
    tensors, stored = _bound(manifest, folder)
    if model_type in ("qwen3_moe", "mixtral"):  # stacked as torch.stack + torch.cat would
        e = stored["model.layers.1." + ("mlp.experts.2.gate_proj.weight" if model_type == "qwen3_moe"
                                        else "block_sparse_moe.experts.2.w1.weight")]
        fused = tensors["model.layers.1.mlp.experts.gate_up_proj"]
        assert torch.equal(fused[2, : e.shape[0]], e)
        assert imported.layout == "transformers" and imported.stacks == 4
    model = lt.build_meta_model(folder, torch.bfloat16)
    if early:  # as from_pretrained does on its builder thread, before the tensors exist
        assert lt.make_nonpersistent(model, torch.device("cpu"))
    unused = lt.attach(model, tensors, torch.device("cpu"))
    assert unused == []
    ref = transformers.AutoModelForCausalLM.from_pretrained(folder, dtype=torch.bfloat16).eval()
    ids = torch.tensor([[1, 5, 9, 13, 17, 21]])
    with torch.no_grad():
        assert torch.equal(model.eval()(input_ids=ids).logits, ref(input_ids=ids).logits)


@needs_both
def test_a_parameter_without_a_tensor_is_named(tmp_path):
    import torch
    folder = _save("llama", str(tmp_path / "llama"))
    tensors, _ = _bound(json.loads(loadplan.import_model(folder).manifest), folder)
    del tensors["model.layers.1.mlp.down_proj.weight"]
    with pytest.raises(lt.TransformersError, match="model.layers.1.mlp.down_proj.weight"):
        lt.attach(lt.build_meta_model(folder), tensors, torch.device("cpu"))
    tensors, _ = _bound(json.loads(loadplan.import_model(folder).manifest), folder)
    tensors["model.norm.weight"] = tensors["model.norm.weight"][:10]
    with pytest.raises(lt.TransformersError, match=r"model.norm.weight: loadplan loaded \[10\]"):
        lt.attach(lt.build_meta_model(folder), tensors, torch.device("cpu"))

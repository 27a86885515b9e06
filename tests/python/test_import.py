"""loadplan.import_model: the published models' skeletons (scripts/hf_skeleton.py) -> manifests
that verify clean and plan; errors as the documented exceptions. No GPU needed."""

import importlib.util
import json
import re
from pathlib import Path

import pytest

import loadplan

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("hf_skeleton", ROOT / "scripts" / "hf_skeleton.py")
hf = importlib.util.module_from_spec(spec)
spec.loader.exec_module(hf)


def skeleton(tmp_path, model):
    folder = tmp_path / model
    hf.make(model, folder)
    return folder


@pytest.mark.parametrize("model", ["llama-3.1-8b", "gpt-oss-20b", "qwen3-30b-a3b"])
def test_import_verifies_clean_and_plans(tmp_path, model):
    imported = loadplan.import_model(skeleton(tmp_path, model), max_ctx=131072)
    assert loadplan.check(imported.manifest) == []  # no error, no warning
    p = loadplan.plan(imported.manifest, at={"batch": 1, "ctx": 8192})
    assert p.load_peak > 0 and p.peak >= p.load_peak
    m = json.loads(imported.manifest)
    assert m["vars"]["ctx"]["max"] == 131072
    assert imported.tensors == sum(1 for b in m["buffers"].values() if "tensor" in b)


def test_gpt_oss_recipes(tmp_path):
    folder = skeleton(tmp_path, "gpt-oss-20b")
    prep = loadplan.import_model(folder)
    assert prep.recipe == "mxfp4-gpt-oss" and prep.carries == 6 * 24
    bf16 = loadplan.import_model(folder, recipe="mxfp4-bf16")
    assert bf16.recipe == "mxfp4-bf16" and bf16.carries == 2 * 24
    b = json.loads(bf16.manifest)["buffers"]["model.layers.0.mlp.experts.gate_up_proj"]
    assert b == {"dtype": "BF16", "export": True, "kind": "carry", "shape": [32, 2880, 5760]}
    assert loadplan.plan(bf16.manifest).load_peak > loadplan.plan(prep.manifest).load_peak


def test_save_writes_the_manifest(tmp_path):
    imported = loadplan.import_model(skeleton(tmp_path, "llama-3.1-8b"), name="l8")
    imported.save(tmp_path / "l8.json")
    assert json.loads((tmp_path / "l8.json").read_text())["name"] == "l8"


def test_errors(tmp_path):
    with pytest.raises(loadplan.CheckpointError, match="not a model folder"):
        loadplan.import_model(tmp_path / "nothing")
    folder = skeleton(tmp_path, "llama-3.1-8b")
    config = json.loads((folder / "config.json").read_text())
    config["num_key_value_heads"] = 16
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(loadplan.CheckpointError, match=r"k_proj.weight \(in model-0000"):
        loadplan.import_model(folder, strict=True)
    loose = loadplan.import_model(folder)  # a warning per disagreement, tensors as stored
    assert any(re.search(r"k_proj.weight \(in model-0000", w) for w in loose.warnings)
    with pytest.raises(loadplan.OptionError, match="recipe 'q4'"):
        loadplan.import_model(folder, recipe="q4")
    with pytest.raises(loadplan.OptionError, match="layout 'keras'"):
        loadplan.import_model(folder, layout="keras")


def _serve(p):
    return next(ph.at["max"] for ph in p.phases if ph.name == "serve")


def _fits(manifest, batch, ctx, device):
    return loadplan.plan(manifest, at={"batch": batch, "ctx": ctx},
                         device_memory=device).to_dict()["device"]["fits_at"]


@pytest.mark.parametrize("model", ["llama-3.1-8b", "gpt-oss-120b"])
def test_models_doc_rows_are_what_plan_computes(tmp_path, model):
    """docs/models.md's rows for the two models it computes by hand (scripts/regen/models-doc made
    the table): recomputed here with the package."""
    row = next(line for line in (ROOT / "docs" / "models.md").read_text().splitlines()
               if line.startswith(f"| {model} |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    imported = loadplan.import_model(skeleton(tmp_path, model), max_ctx=131072, max_batch=1024)
    m = imported.manifest
    p = loadplan.plan(m)
    got = [model, imported.recipe, f"{p.load_peak / 2**30:.2f}", f"{p.naive_peak / 2**30:.2f}"]
    for ctx in (8192, 131072):
        for batch in (1, 32):
            got.append(f"{_serve(loadplan.plan(m, at={'batch': batch, 'ctx': ctx})) / 2**30:.2f}")
    got.append(str(imported.kv_bytes_per_token))
    assert got == cells[:9]
    # The largest batch at 128k the doc names fits, one more does not (or 0: one does not).
    for device, cell in (("h200", cells[9]), ("b200", cells[10])):
        n = int(cell)
        assert n == 0 or _fits(m, n, 131072, device), (device, n)
        assert not _fits(m, n + 1, 131072, device), (device, n + 1)


def test_import_parallel_writes_ranks_as_the_cli_does(tmp_path, cli):
    """import_parallel(): the CLI's rank files and deploy.json, byte for byte; each rank checks
    clean and reads 1/8 of the split tensors; the deployment plans with a row per rank."""
    folder = skeleton(tmp_path, "llama-3.1-8b")
    out = loadplan.import_parallel(folder, tmp_path / "py", tensor_parallel=8, recipe="none",
                                   max_batch=16, max_ctx=8192)
    import subprocess
    subprocess.run([str(cli.path), "import", str(folder), "--recipe", "none", "--tensor-parallel",
                    "8", "--max-batch", "16", "--max-ctx", "8192", "-o", str(tmp_path / "cli")],
                   check=True, capture_output=True)
    for f in ["deploy.json"] + [f"rank-{r}.json" for r in range(8)]:
        assert (tmp_path / "py" / f).read_text() == (tmp_path / "cli" / f).read_text(), f
    assert len(out.ranks) == 8 and all(r["experts"] == [] for r in out.ranks)
    assert len({r["bytes_read"] for r in out.ranks}) == 1
    rank = json.loads((tmp_path / "py" / "rank-3.json").read_text())
    assert rank["schema"] == 2
    q = rank["buffers"]["model.layers.0.self_attn.q_proj.weight"]
    assert q["slice"] == {"dim": 0, "start": 3 * 512, "length": 512, "extent": 4096}
    assert q["shape"] == [512, 4096]
    assert loadplan.check(rank) == []
    with pytest.raises(loadplan.CheckpointError, match="does not divide by --tensor-parallel 7"):
        loadplan.import_parallel(folder, tmp_path / "bad", tensor_parallel=7, recipe="none")

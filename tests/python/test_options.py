"""Options out of range: Python refuses them as the CLI does (OptionError, a ValueError; the
CLI exits 2), with the option named both ways, never an InternalError or a TypeError showing
the binding's signature; and plan()'s verdict is the CLI's exit code (issue 28)."""

import subprocess

import pytest

import loadplan
from conftest import EXAMPLES, ROOT, TINY

GPT = next(p for p in EXAMPLES if p.name == "gpt-oss-120b.json")


@pytest.mark.parametrize("kw, message", [
    ({"lanes": -1}, r"lanes \(--lanes\) -1 is not in \[1, 1024\]"),
    ({"lanes": 0}, r"lanes \(--lanes\) 0 is not in \[1, 1024\]"),
    ({"prefetch": -1}, r"prefetch \(--prefetch\) -1 is not in \[0, 2147483647\]"),
    ({"placement": "sideways"}, "placement sideways: not a policy"),
])
def test_plan_options_out_of_range_are_option_errors(kw, message):
    with pytest.raises(loadplan.OptionError, match=message):
        loadplan.plan(TINY, **kw)


@pytest.mark.parametrize("kw, message", [
    ({"max_batch": 2**62}, r"--max-batch \(max_batch\) 4611686018427387904 is not in"),
    ({"max_ctx": -5}, r"--max-ctx \(max_ctx\) -5 is not in \[1, 2147483647\]"),
    ({"kv_bytes_per_token": 0}, r"--kv-bytes-per-token \(kv_bytes_per_token\) 0 is not in"),
    ({"max_batch": 2**31 - 1, "max_ctx": 2**31 - 1}, "larger than 64 bits can count"),
])
def test_import_options_out_of_range_are_option_errors(tmp_path, cli, kw, message):
    from safetensors.numpy import save_file  # the package's own writer
    import numpy as np
    (tmp_path / "config.json").write_text(
        '{"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 1, '
        '"num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 256, '
        '"intermediate_size": 128, "max_position_embeddings": 4096}')
    save_file({"model.layers.0.self_attn.k_proj.weight": np.zeros((32, 64), np.float16)},
              str(tmp_path / "model.safetensors"))
    with pytest.raises(loadplan.OptionError, match=message):
        loadplan.import_model(tmp_path, **kw)
    flags = [a for k, v in kw.items() for a in (f"--{k.replace('_', '-')}", str(v))]
    out = subprocess.run([str(cli.path), "import", str(tmp_path), "-o", str(tmp_path / "m.json"),
                          *flags], capture_output=True, text=True)
    assert out.returncode == 2, out.stderr


def test_plans_verdict_at_a_point_is_the_clis_exit_code(cli):
    at = {"batch": 16, "ctx": 131072}  # fits there; the box (batch 256) does not
    p = loadplan.plan(GPT, at=at, device_memory="h200")
    assert p.fits is True
    assert p.to_dict()["device"]["fits_every_value"] is False
    out = subprocess.run([str(cli.path), "plan", str(GPT), "--device-memory", "h200",
                          "--at", "batch=16", "--at", "ctx=131072"], capture_output=True)
    assert out.returncode == 0
    assert loadplan.plan(GPT, at={"batch": 17, "ctx": 131072}, device_memory="h200").fits is False


@pytest.mark.parametrize("kw, message", [
    ({"io_threads": 0}, r"io_threads \(--io-threads\) 0 is not in \[1, 256\]"),
    ({"io_threads": -1}, r"io_threads \(--io-threads\) -1 is negative"),
    ({"chunk_bytes": 10}, r"chunk_bytes \(--chunk-mib\) 10 B is not in \[4 KiB, 1 GiB\]"),
    ({"reserve": -1}, r"reserve \(--reserve\) -1 is negative"),
    ({"memory_limit": -5}, r"memory_limit \(--memory-limit\) -5 is negative"),
    ({"lanes": 0}, r"lanes \(--lanes\) 0 is not in \[1, 1024\]"),
    ({"slice_read": "rows"}, r"slice_read \(--slice-read\) 'rows' is not one of: auto, runs, span"),
])
def test_load_options_are_checked_before_the_device(checkpoint, kw, message):
    """The bounds `loadplan run` has, from the library: no GPU is needed to hear them."""
    with pytest.raises(loadplan.OptionError, match=message):
        loadplan.load(TINY, checkpoint, 0, **kw)


def test_a_machine_profile_sets_the_io_pair_as_run_does(tmp_path, cli, checkpoint):
    """load(machine=...) reads the profile with the CLI's strict parser (api::ReadMachineOption;
    the pair it gives is api::ApplyMachine's, tested in tests/api/api_test.cc); a bad one is the
    CLI's error, before any GPU."""
    import json
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"schema": "loadplan-machine-profile"}))
    for path, message in [(tmp_path / "none.json", "cannot open"), (bad, "/version")]:
        with pytest.raises(loadplan.OptionError, match=r"machine \(--machine\): .*" + message):
            loadplan.load(TINY, checkpoint, 0, machine=path)
        out = subprocess.run([str(cli.path), "run", str(TINY), "--checkpoint", str(checkpoint),
                              "--machine", str(path)], capture_output=True, text=True)
        assert out.returncode == 2
        assert "machine (--machine): " in out.stderr and message in out.stderr, out.stderr


def test_rank_picks_a_stage_of_a_deployment_or_is_an_option_error(tmp_path, checkpoint):
    """load(deploy, rank=r): stage r, whatever the launcher's environment; a rank past the
    stages or rank= with a plain manifest is an OptionError before any GPU is touched."""
    import json
    deploy = tmp_path / "deploy.json"
    deploy.write_text(json.dumps({"deployment": "d", "tensor_parallel": 2,
                                  "stages": [{"manifest": str(TINY)}, {"manifest": str(TINY)}]}))
    stage = loadplan._loadplan.resolve_source(str(deploy), 1, 0)["stage"]
    assert (stage["stage"], stage["stages"], stage["device"]) == (1, 2, 0)
    assert loadplan._loadplan.resolve_source(str(TINY), None, 0)["stage"] is None
    with pytest.raises(loadplan.OptionError, match=r"rank \(rank=\) 2 is not a stage of deployment d"):
        loadplan.load(deploy, checkpoint, rank=2)
    with pytest.raises(loadplan.OptionError, match=r"rank \(rank=\) 0: .* is a manifest, not a deployment"):
        loadplan.load(TINY, checkpoint, rank=0)
    with pytest.raises(loadplan.OptionError, match=r"rank \(rank=\) 0: .* is a model folder"):
        loadplan.load(tmp_path, rank=0)
    with pytest.raises(loadplan.OptionError, match=r"checkpoint: a manifest needs the checkpoint"):
        loadplan.load(TINY)

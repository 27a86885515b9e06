#!/usr/bin/env python3
"""A tensor-parallel rank's load by kind of slice and read path, side by side (issue 30).

    python3 bench/slice_paths.py LOADPLAN RANK_MANIFEST CKPT_DIR [--rounds R] [--json OUT]

From RANK_MANIFEST (one rank of `loadplan import --tensor-parallel`) it writes two manifests
beside it: `rows` (the weights read whole or sliced along dim 0: one run each) and `cols` (the
weights sliced along a dim > 0: one run per row). Each round then runs, every row a fresh
`loadplan run --no-derive` process, page cache warm: pinned H2D (`run --ceilings` once, first),
rows, cols with `--slice-read runs`, `span`, `map` and `auto`, and the whole rank with `auto` and
`map`. With `--beside LOADPLAN2` (another build, e.g. the commit before a change) every
row runs with both binaries in turn, its twin named "NAME before". With `--presharded DIR` (torch and safetensors
needed) it also writes the rank's slices, cut by torch from what safetensors reads whole, as
whole tensors of one file in DIR (the rank's own checkpoint, as `save_sharded_state` makes one)
and runs `rows`, `cols` and `rank` from there: the same bytes read with no slicing, the bound a
sliced read is measured against. With `--lanes N ...` it also runs rows and the whole rank
with `run --lanes N` for each N: a rank manifest loads on the lanes it says (16 as `import`
writes one), and a lane orders each fill's copies after the previous fill's on the device.
Prints one line per run and a table: best and worst GB/s, the best / pinned H2D, the bytes
read from the files / the bytes filled (a span reads the gaps between runs), which path auto
took.
"""
import argparse
import collections
import json
import os
import subprocess
import sys


def subset(manifest_path, keep, suffix):
    m = json.load(open(manifest_path))
    m["buffers"] = {k: b for k, b in m["buffers"].items()
                    if "tensor" not in b and "tensors" not in b or keep(k, b)}
    m["name"] = f"{m.get('name', 'rank')}-{suffix}"
    out = manifest_path.replace(".json", f".{suffix}.json")
    json.dump(m, open(out, "w"))
    return out


def checkpoint_files(ckpt):
    """tensor name -> its safetensors file in the folder CKPT (the index's map, or one file)."""
    index = os.path.join(ckpt, "model.safetensors.index.json")
    if os.path.isfile(index):
        return {t: os.path.join(ckpt, f) for t, f in json.load(open(index))["weight_map"].items()}
    from safetensors import safe_open
    one = os.path.join(ckpt, "model.safetensors")
    with safe_open(one, "pt") as h:
        return {t: one for t in h.keys()}


def preshard(manifest_path, ckpt, folder):
    """The rank's bound tensors, each cut to its slice by torch from safetensors' whole tensor,
    saved whole in FOLDER/model.safetensors under its buffer's name (two buffers may slice one
    tensor); the manifest binding them so, without slices. A buffer of several tensors
    ("tensors": stacked experts) is refused."""
    from safetensors import safe_open
    from safetensors.torch import save_file
    m = json.load(open(manifest_path))
    files, tensors = checkpoint_files(ckpt), {}
    for name, b in m["buffers"].items():
        if "tensors" in b:
            raise ValueError(f"buffer {name} binds several tensors; not presharded")
        if "tensor" not in b:
            continue
        with safe_open(files[b["tensor"]], "pt") as h:
            t = h.get_tensor(b["tensor"])
        cut = b.pop("slice", None)
        if cut:  # a copy: a view would keep the whole tensor alive until the file is written
            t = t.narrow(cut["dim"], cut["start"], cut["length"]).clone()
        tensors[name] = t.contiguous()
        b["tensor"] = name
    os.makedirs(folder, exist_ok=True)
    save_file(tensors, os.path.join(folder, "model.safetensors"), metadata={"format": "pt"})
    m["name"] = f"{m.get('name', 'rank')}-presharded"
    out = manifest_path.replace(".json", ".presharded.json")
    json.dump(m, open(out, "w"))
    return out


def older_profile(path, folder):
    """PATH (a profile) for an older binary: a copy in FOLDER without the keys added since
    (rates.per_map_run_s), which an older parser refuses as unknown; None without a profile."""
    if not path:
        return None
    p = json.load(open(path))
    p.get("rates", {}).pop("per_map_run_s", None)
    out = os.path.join(folder, "profile.older.json")
    json.dump(p, open(out, "w"), indent=1)
    return out


# A row of the table: its name, the manifest it loads, the slice path, the checkpoint folder
# (None: the rank's), the lanes (None: the manifest's).
Row = collections.namedtuple("Row", "name manifest mode ckpt lanes", defaults=(None, None))


def run(a, manifest, mode, ceilings=False, binary=None, ckpt=None, machine=None, lanes=None):
    cmd = [binary or a.loadplan, "run", manifest, "--checkpoint", ckpt or a.ckpt, "--no-derive", "--repeat", "1",
           "--slice-read", mode, "--format", "json"]
    if lanes:
        cmd += ["--lanes", str(lanes)]
    if ceilings:
        cmd.append("--ceilings")
    machine = machine or a.machine
    if machine:
        cmd += ["--machine", machine]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        return {"error": (p.stderr or p.stdout).strip()[-300:]}
    r = json.loads(p.stdout[p.stdout.index("{"):])
    m = r["runs"][r["median_run"]]
    return {"gbps": m["gbps"], "wall_s": m["wall_s"], "read_s": m["read_s"],
            "copy_s": m["copy_s"], "slot_wait_s": m["slot_wait_s"], "chunks": m["chunks"],
            "job_wait_s": m.get("job_wait_s"), "submit_s": m.get("submit_s"),
            "start_s": m.get("start_s"), "end_s": m.get("end_s"),
            "enqueue_s": m.get("enqueue_s"),
            "fill_bytes": r["fill_bytes"],
            "file_bytes": m["file_bytes"], "reads": m["reads"],
            "as_runs": m["slices_as_runs"], "as_span": m["slices_as_span"],
            "as_map": m.get("slices_as_map", 0),
            "peak_matches": r["measured"]["peak_matches"],
            "pinned_h2d_gbps": r.get("ceilings", {}).get("pinned_h2d_gbps")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("loadplan")
    ap.add_argument("manifest")
    ap.add_argument("ckpt")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--machine", help="a profile for every run (its I/O pair, auto's costs)")
    ap.add_argument("--beside", help="another loadplan binary, each row run with it in turn")
    ap.add_argument("--lanes", type=int, nargs="*", default=[],
                    help="also rows and the whole rank (auto) with --lanes N, for each N")
    ap.add_argument("--presharded", metavar="DIR",
                    help="write the rank's slices as whole tensors there; rows from it beside")
    a = ap.parse_args()
    is_row = lambda k, b: b.get("slice", {}).get("dim", 0) == 0  # noqa: E731
    rows = subset(a.manifest, is_row, "rows")
    cols = subset(a.manifest, lambda k, b: not is_row(k, b), "cols")
    pinned = run(a, rows, "auto", ceilings=True).get("pinned_h2d_gbps")
    print(f"pinned H2D {pinned} GB/s", flush=True)
    plan = [Row("rows", rows, "auto"), Row("cols runs", cols, "runs"),
            Row("cols span", cols, "span"), Row("cols map", cols, "map"),
            Row("cols auto", cols, "auto"), Row("rank auto", a.manifest, "auto"),
            Row("rank map", a.manifest, "map")]
    for n in a.lanes:  # the plan's lane order: one lane orders every fill after the one before
        plan += [Row(f"rows lanes {n}", rows, "auto", lanes=n),
                 Row(f"rank lanes {n}", a.manifest, "auto", lanes=n)]
    whole = None
    if a.presharded:  # the same buffers, read whole from the rank's own checkpoint
        try:
            whole = preshard(a.manifest, a.ckpt, a.presharded)
        except Exception as e:  # noqa: BLE001 (torch missing, a tensor unreadable: say so, go on)
            print(f"presharded: not written: {type(e).__name__}: {e}", flush=True)
    if whole:
        row_names = set(json.load(open(rows))["buffers"])
        plan += [Row("rows presharded", subset(whole, lambda k, b: k in row_names, "rows"),
                     "auto", a.presharded),
                 Row("cols presharded", subset(whole, lambda k, b: k not in row_names, "cols"),
                     "auto", a.presharded),
                 Row("rank presharded", whole, "auto", a.presharded)]
    binaries = [("", a.loadplan, a.machine)]
    if a.beside:
        binaries.append((" before", a.beside,
                         older_profile(a.machine, os.path.dirname(os.path.abspath(a.manifest)))))
    results = {row.name + tag: [] for row in plan for tag, _, _ in binaries}
    for k in range(a.rounds):
        for row in plan:
            for tag, binary, machine in binaries:
                r = run(a, row.manifest, row.mode, binary=binary, ckpt=row.ckpt, machine=machine,
                        lanes=row.lanes)
                results[row.name + tag].append(r)
                print(f"round {k + 1} {row.name + tag}: {json.dumps(r)}", flush=True)
    print(f"| {'row':17} | best GB/s | worst GB/s | best / pinned | file / filled | GB filled "
          f"| auto took |")
    print("|" + "---|" * 7)
    for name, runs in results.items():
        ok = [r for r in runs if "gbps" in r]
        if not ok:
            print(f"| {name:17} | FAILED: {runs[0].get('error', '')[:80]} |")
            continue
        best, worst = max(r["gbps"] for r in ok), min(r["gbps"] for r in ok)
        r = ok[0]
        took = f"{r['as_runs']} runs, {r['as_span']} span, {r['as_map']} map"
        ratio = f"{best / pinned:.3f}" if pinned else "-"
        print(f"| {name:17} | {best:.2f} | {worst:.2f} | {ratio} | "
              f"{r['file_bytes'] / r['fill_bytes']:.3f} | {r['fill_bytes'] / 1e9:.3f} | {took} |")
    if a.json:
        json.dump({"pinned_h2d_gbps": pinned, "rows": results}, open(a.json, "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

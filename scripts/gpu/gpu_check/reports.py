"""Reading `loadplan` JSON reports: what the bash script did in its `python3 -` helpers
(collect.py, table.py, predict_table.py and the inline ones), in process. Each report function
yields the lines the helper printed; Check.report sends them to the summary."""

import json
import os
import re


def read(path):
    with open(path) as f:
        return f.read()


def report_in(text):
    """The JSON object in a log: from its first '{' to its last '}' (ValueError when none)."""
    return json.loads(text[text.index("{"):text.rindex("}") + 1])


def collect(name, path):
    """One `loadplan run` report as a line of bench.jsonl, named; nothing when the run failed
    before printing one."""
    try:
        report = report_in(read(path))
    except ValueError:
        return
    report["name"] = name
    yield json.dumps(report)


def table(jsonl, out_json):
    """bench.jsonl's rows into bench.json, and the benchmark's table."""
    with open(jsonl) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    with open(out_json, "w") as f:
        json.dump(rows, f, indent=1)
    yield (f"{'run':<11}{'GB/s':>7}{'wall s':>8}{'read':>7}{'copy':>7}{'derive':>8}{'peak GiB':>10}"
           f"{'predicted':>10}{'delta MiB':>10}  check")
    for r in rows:
        m = r["runs"][r["median_run"]]
        delta = (r["measured"]["peak_used_delta"] - r["predicted"]["peak"]) / 2**20
        check = "" if "check" not in r else ("equal" if r["check"]["ok"] else "MISMATCH")
        yield (f"{r['name']:<11}{r['gbps']:>7.2f}{m['wall_s']:>8.3f}{m['read_s']:>7.3f}"
               f"{m['copy_s']:>7.3f}{m['derive_s']:>8.3f}"
               f"{r['measured']['peak_allocated']/2**30:>10.3f}"
               f"{r['predicted']['peak']/2**30:>10.3f}{delta:>10.1f}  {check}")
        if "ceilings" in r:
            yield f"{'':<11}ceilings: {r['ceilings']}"


def loaded(path):
    try:
        return report_in(read(path))
    except ValueError:
        return None


def predict_row(name, plan, run):
    """A row of predicted against measured, or the line saying a report is missing."""
    p, r = loaded(plan), loaded(run)
    if not p or not r or "load_time" not in p:
        return f"{name}: missing report"
    m = r["runs"][r["median_run"]]
    pr = p["load_time"]
    return {"name": name, "predicted_s": pr["wall_s"], "measured_s": m["wall_s"],
            "ratio": pr["wall_s"] / m["wall_s"], "measured_gbps": r["gbps"],
            "predicted_phases": pr["phases"],
            "measured_phases": {k: m[k] for k in ("read_s", "copy_s", "derive_s")},
            "loads": len(r["runs"])}


def predict_cases(d):
    """(name, plan, run) of hot, cold and every fit rank that ran."""
    cases = [(name, f"{d}/plan-{name}.json", f"{d}/run-{name}.json") for name in ("hot", "cold")]
    fit = loaded(f"{d}/fit.json")
    ranks_file = f"{d}/fit-args.txt.ranks"
    ranks = [int(x) for x in read(ranks_file).split()] if os.path.exists(ranks_file) else []
    for k, rank in enumerate(ranks):
        if os.path.exists(f"{d}/run-fit{k}.json"):
            label = fit["fit"]["candidates"][rank]["label"]
            cases.append((f"fit rank {rank}: " + label, f"{d}/plan-fit{k}.json",
                          f"{d}/run-fit{k}.json"))
    return cases


def predict_table(d):
    """D/plan-*.json (plan --machine), D/run-*.json (run), D/fit.json (plan --fit): predicted
    against measured, printed and written to D/predict.json."""
    rows = []
    for case in predict_cases(d):
        row = predict_row(*case)
        if isinstance(row, str):
            yield row
        else:
            rows.append(row)
    yield f"{'case':<58}{'predicted s':>12}{'measured s':>11}{'ratio':>7}{'GB/s':>7}"
    for r in rows:
        yield (f"{r['name']:<58}{r['predicted_s']:>12.3f}{r['measured_s']:>11.3f}{r['ratio']:>7.3f}"
               f"{r['measured_gbps']:>7.2f}")
    fits = [r for r in rows if r["name"].startswith("fit")]
    if fits:
        best = min(fits, key=lambda r: r["measured_s"])
        yield (f"fit choice (rank 0) measured {fits[0]['measured_s']:.3f} s; fastest measured "
               f"{best['measured_s']:.3f} s ({best['name']}); "
               f"choice / fastest = {fits[0]['measured_s'] / best['measured_s']:.3f}")
    with open(f"{d}/predict.json", "w") as f:
        json.dump(rows, f, indent=1)


def fit_args(fit_json, out_txt):
    """The ranked configurations of `plan --fit` that fit, as `run` arguments, in rank order:
    the first three, then three spread over the rest down to the last (its slowest). OUT_TXT
    gets one per line, OUT_TXT.ranks their ranks."""
    with open(fit_json) as f:
        c = [x for x in json.load(f)["fit"]["candidates"] if x["fits"]]
    seen, out = set(), []
    for x in c:
        a = ("--naive " if x["naive"] else "") + f"--lanes {x['lanes']}" + \
            ("" if x["naive"] else f" --prefetch {x['prefetch']} --placement {x['placement']}")
        if a not in seen:
            seen.add(a)
            out.append(a)
    n = len(out)
    picks = sorted(set([i for i in (0, 1, 2) if i < n] +
                       [n - 1 - (n - 4) * k // 3 for k in range(3) if n > 3]))
    with open(out_txt, "w") as f:
        f.write("\n".join(out[i] for i in picks) + "\n")
    with open(out_txt + ".ranks", "w") as f:
        f.write("\n".join(str(i) for i in picks) + "\n")


def process(path, t0, t1, mode):
    """A `loadplan run` process's outer wall time against its report's breakdown."""
    t = read(path)
    try:
        r = report_in(t)
    except ValueError:
        yield "process: no report: " + t[-300:]
        return
    outer = t1 - t0
    w = r["runs"][0]["wall_s"]
    p = r["process"]
    yield (f"process ({mode}): outer wall {outer:.3f} s, load wall {w:.3f} s, outside the load "
           f"{outer - w:.3f} s; to first load {p['to_load_s']:.3f} (context {p['context_s']:.3f} "
           f"beside prepare {p['prepare_s']:.3f}), first call {p['first_call_s']:.3f}, "
           f"free {p.get('free_s', 0):.3f}, the rest (exec, exit) "
           f"{outer - p['to_load_s'] - p['first_call_s'] - p.get('free_s', 0):.3f} s"
           + (f" = exec {p['start_unix_s'] - t0:.3f} + report and exit "
              f"{t1 - p['report_unix_s']:.3f}" if p.get("start_unix_s") else ""))


def context_exit(path, t0, t1):
    """A bare CUDA process (bench_context_exit): its outer wall time, phase by phase."""
    t = read(path)
    try:
        r = report_in(t)
    except ValueError:
        yield "context-exit: no report: " + t[-300:]
        return
    yield (f"process: bare CUDA, exit by {r['mode']}: outer wall {t1 - t0:.3f} s = exec "
           f"{r['start_unix_s'] - t0:.3f} + context {r['context_s']:.3f} + 16 GiB malloc "
           f"{r['malloc_s']:.3f} + free {r['free_s']:.3f} + reset {r['reset_s']:.3f}"
           f" + exit {t1 - r['end_unix_s']:.3f} s")


CEILINGS = ("pinned_h2d_gbps", "pinned_h2d_beside_read_gbps", "host_read_beside_h2d_gbps",
            "host_read_gbps", "host_copy_gbps")


def run_line(path, label):
    """GB/s, the median run's profile, peak against the prediction, and the ceilings when
    --ceilings ran, of the `loadplan run --format json` report in PATH."""
    t = read(path)
    try:
        r = report_in(t)
    except ValueError:
        yield f"{label}: no report: " + t[-300:]
        return
    m = r["runs"][r["median_run"]]
    c = r.get("ceilings", {}).get("pinned_h2d_gbps")
    yield ("%s: %.2f GB/s (%.3f s; read %.3f, slot waits %.3f per thread); peak %.3f GiB = "
           "predicted %.3f%s"
           % (label, r["gbps"], m["wall_s"], m["read_s"], m["slot_wait_s"],
              r["measured"]["peak_allocated"] / 2**30, r["predicted"]["peak"] / 2**30,
              "; pinned H2D %.2f GB/s: %.3f of it" % (c, r["gbps"] / c) if isinstance(c, float)
              else ""))
    x = r.get("ceilings", {})
    if x:
        yield ("%s: ceilings: pinned H2D %s GB/s, beside the host read %s (the host read beside "
               "it %s), host read %s, host memcpy %s"
               % ((label,) + tuple(x.get(k) for k in CEILINGS)))


def room_default(path):
    """run's default reserve and the free memory it saw, from room-default's report."""
    t = read(path)
    d = json.loads(t[t.index("{"):])["device"]
    yield " ".join(str(x) for x in ("room: default reserve", d["reserve"], "B; free before",
                                    d["free_before"], "of", d["total"]))


def chosen_io(profile):
    """threads:MiB, the pair `calibrate --choose-io` wrote into the machine profile."""
    with open(profile) as f:
        io = json.load(f)["io"]
    return "%d:%d" % (io["threads"], io["chunk_bytes"] >> 20)


def slow_peers(rows_jsonl):
    """The loaders under 3 GB/s on the page cache (they read around it): run once only."""
    with open(rows_jsonl) as f:
        rows = [json.loads(line) for line in f]
    return [r["name"] for r in rows if r.get("storage") == "page cache"
            and isinstance(r.get("raw_gbps"), (int, float)) and r["raw_gbps"] < 3]


def stage_count(deploy_json):
    with open(deploy_json) as f:
        return len(json.load(f)["stages"])


README_FENCE = re.compile(r"^```python\n(.*?)^```$", re.S | re.M)


def readme_transformers(readme, llama):
    """The README's `loadplan.transformers` lines (its python block naming them), on the zoo's
    llama instead of /models/Qwen3-30B-A3B."""
    blocks = README_FENCE.findall(read(readme))
    block = next(x for x in blocks if "loadplan.transformers" in x)
    return "\n".join(line.replace('"/models/Qwen3-30B-A3B"', f'"{llama}"', 1)
                     for line in block.split("\n"))

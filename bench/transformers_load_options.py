#!/usr/bin/env python3
"""loadplan.transformers.from_pretrained under several load options, fresh processes, warm
imports (as bench/transformers_load.py's "warm" rows): where a load's time goes.

    python3 bench/transformers_load_options.py DIR '{}' '{"io_threads": 16}' ...
"""
import json
import subprocess
import sys

CHILD = r"""
import json, sys, time, torch, transformers
import loadplan.transformers as lt
folder, opts = sys.argv[1], json.loads(sys.argv[2])
torch.zeros(1, device="cuda")
lt.model_class(transformers.AutoConfig.from_pretrained(folder))
t0 = time.perf_counter()
m = lt.from_pretrained(folder, device=0, **opts)
torch.cuda.synchronize()
s = time.perf_counter() - t0
r = m.loadplan_report
keep = {k: v for k, v in r.items() if isinstance(v, (int, float, str)) and k != "manifest"}
print(json.dumps({"options": opts, "seconds": s, **keep}))
"""


def main() -> int:
    folder = sys.argv[1]
    for rnd in range(2):
        for opts in sys.argv[2:]:
            out = subprocess.run([sys.executable, "-c", CHILD, folder, opts], capture_output=True,
                                 text=True, timeout=300)
            lines = [x for x in out.stdout.splitlines() if x.startswith("{")]
            print(lines[-1] if lines else f"{opts} failed: {out.stderr[-800:]}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

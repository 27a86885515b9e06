#!/usr/bin/env python3
"""Python's load of a deployment file under a launcher (docs/deploy.md): run by torchrun, one
process per stage; prints the stage this process loaded, its GPU and the load's rate.

    torchrun --nproc-per-node N scripts/deploy_check.py DEPLOY.json CHECKPOINT
"""
import sys
import time

import loadplan


def main():
    deploy, checkpoint = sys.argv[1], sys.argv[2]
    t0 = time.perf_counter()
    model = loadplan.load(deploy, checkpoint)
    dt = time.perf_counter() - t0
    s = model.stage
    assert s is not None, "a deployment file gives the Model its stage"
    print(f"rank {s['rank']} of {s['world_size']} ({s['launcher']}): stage {s['stage']} of "
          f"{s['stages']} ({s['deployment']}) on GPU {s['device']}, {len(model)} buffers, "
          f"{dt:.3f} s for the whole call")


if __name__ == "__main__":
    main()

"""The GPU check: runs ON THE GPU MACHINE, from the repository root, with .gpu/ carried
(scripts/gpu/gpu-pack). scripts/gpu/gpu-check starts it (python3 -m gpu_check; standard library
only). Every part is time-boxed; the whole stays under BUDGET seconds (default 540, ~9 minutes).
Results in $OUT (default /tmp/gpu-check-out; at most 8 files come back): summary.txt, bench.txt,
bench.json, tests.txt, sanitizer.txt, logs.tar.gz (every log and XML under $WORK/logs, default
/tmp/gpu-check/logs), and what a part adds. The summary is printed last.

    scripts/gpu/gpu-check                      # PARTS="tests kernels bench sanitizer"
    PARTS="tests bench" scripts/gpu/gpu-check  # the parts named, in that order
    scripts/gpu/gpu-check --dry-run            # (or DRY_RUN=1) each command, none run
    PARTS=help scripts/gpu/gpu-check           # (or --help) this text

The parts (PARTS="..."), their variables:
  tests       the GPU tests (gtest XML): tests.txt
  kernels     derive-kernel bandwidth beside a D2D copy; the recipe recomputed (recipe_check.py)
  bench       the load benchmark (8 gpt-oss layers, 13.7 GB: staged, naive, no-derive,
              I/O-thread/chunk and lane sweeps, a --check run, --save-derived, the PyTorch
              safetensors baseline; loadplan-before beside when packed): bench.txt, bench.json
  sanitizer   compute-sanitizer memcheck (leak check), initcheck and racecheck over the GPU
              tests: sanitizer.txt
  shuffled    the GPU tests shuffled (seed recorded), then each alone     SHUFFLE_SEED=7
  properties  the fuzz properties on every core: properties.txt           CASES=1000000
  python      the Python package (scripts/gpu/gpu-python): python.txt
  hf          import vs transformers (scripts/gpu/gpu-hf): hf.txt
  zoo         every causal-LM family of transformers, small: import, bytes, logits, cache;
              zoo.json                                                    ZOO_TYPES=llama,qwen3_moe
  hfspeed     loadplan.transformers.from_pretrained beside transformers' own
                                  HFSPEED="llama8b-16 qwen3moe-4" HFSPEED_ROUNDS=3 HFSPEED_COLD_ROUNDS=1
  ranks       every tensor-parallel rank, byte-equal: a Llama-8B shape (TP), Qwen3-MoE (TP x
              EP), gpt-oss-120b layers with its recipe (each rank's prepared experts
              against the recipe on its slice; run --check per rank), and on request
              "grid": the Llama shape as 2 pipeline stages x 4 ranks; ranks-*.json,
              slice-paths.json     RANKS_TP=8 RANKS_CASES="llama qwen3moe gptoss"
                                   GPT_OSS_LAYERS=4 RANKS_GPTOSS_TP=8
  predict     calibrate, plan --machine / --fit vs run: profile.json, predict.json, predict.tar.gz
  room        --device-memory free, run's --reserve
  paths       H2D paths (bench/h2d_paths.py), cuFile, run's process overhead
  overhead    run's process overhead alone (exec, context, exit)
  copies      pinned H2D by chunk size x streams, no reads (bench_h2d_chunks GIB SLOTS [quick],
              ';' between runs)                                           COPIES_ARGS="8 24 quick;60 24 quick"
  soak        1000 load/free + 100 faults (scripts/gpu/gpu-soak), run's Ctrl-C: soak.txt
                                                                          SOAK_CYCLES=1000 SOAK_FAULTS=100
  deploy      a deployment under torchrun, world size 1
  multi       every GPU: a PP-N gpt-oss-120b under torchrun, NCCL boundaries
  peers       loadplan beside InstantTensor, fastsafetensors, safetensors (bench/peers,
              docs/peers.md; .whl/ carried): peers.json                   PEERS_SHM_GB=40
  sweep       I/O threads x chunk x O_DIRECT per storage path, beside peers (bench/storage_sweep.py)
              SWEEP_CONFIGS="default 12:2 12:1" SWEEP_PATHS="page-cache tmpfs cold"
              SWEEP_PAGE_PEERS=instanttensor-buffered SWEEP_TMPFS_PEERS=instanttensor
  full        the 36-layer gpt-oss-120b from tmpfs, beside peers
              FULL_CONFIGS="16:4 default:job" FULL_PEERS="instanttensor instanttensor:job" FULL_ROUNDS=2

Every variable: PARTS, BUDGET (seconds, 540), OUT, WORK (/tmp/gpu-check), GPU_DIR (the packed
folder, .gpu under the repository root; the scripts the parts call, gpu-hf, gpu-python, read
.gpu/ themselves), DRY_RUN, and the parts' own above.

Each part is a function of a Check (core.py): `step(name, seconds, cmd)` runs a command
time-boxed (never past the budget less 15 s; SKIPPED under 5 s; SIGTERM to its process group
at the limit, SIGKILL 5 s later), its output in $WORK/logs/NAME.log and a line in the summary:
"NAME: ok (N s)", "NAME: TIMED OUT after Ns (N s)", "NAME: FAILED rc=N (N s)" or
"NAME: SKIPPED (out of time)".
"""

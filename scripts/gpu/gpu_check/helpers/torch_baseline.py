"""torch_baseline.py CKPT: safetensors' load_file(device="cuda") over CKPT's shards, the GB/s
and peak the benchmark's rows stand beside (written into $W by the check; needs torch)."""
import glob, sys, time
import torch
from safetensors.torch import load_file
files = sorted(glob.glob(sys.argv[1] + "/*.safetensors"))
torch.empty(1, device="cuda"); torch.cuda.synchronize()
torch.cuda.reset_peak_memory_stats()
t0 = time.perf_counter(); total = 0; keep = []
for f in files:
    d = load_file(f, device="cuda")
    total += sum(t.numel() * t.element_size() for t in d.values()); keep.append(d)
torch.cuda.synchronize(); dt = time.perf_counter() - t0
print(f"torch safetensors load_file(device='cuda'): {total/1e9:.3f} GB in {dt:.3f} s = {total/dt/1e9:.2f} GB/s; "
      f"peak allocated {torch.cuda.max_memory_allocated()/2**30:.3f} GiB")

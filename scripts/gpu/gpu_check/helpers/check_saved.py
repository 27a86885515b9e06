"""check_saved.py FILE: the derived tensors `run --save-derived` wrote for one layer (written
into $W by the check; needs safetensors)."""
import sys
from safetensors import safe_open
with safe_open(sys.argv[1], framework="np") as f:
    keys = list(f.keys())
    shapes = {k: f.get_slice(k).get_shape() for k in keys}
print(f"{sys.argv[1]}: {len(keys)} derived tensors")
for k in keys: print(f"  {k} {shapes[k]}")
assert len(keys) == 6, "one layer has 6 derived expert tensors"

"""evict.py CKPT: drops CKPT's shards from the page cache (written into $W by the check, with
@BENCH@ made the repository's bench/)."""
import sys
# Drops the checkpoint's pages from the page cache (bench/storage_sweep.py's evict: no root needed).
sys.path.insert(0, "@BENCH@")
from storage_sweep import evict
evict(sys.argv[1])
print("evicted", sys.argv[1])

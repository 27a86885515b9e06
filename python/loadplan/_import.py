"""loadplan.import_model: a Hugging Face model folder -> a manifest (`loadplan import`)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import List, Optional

from . import _loadplan


@dataclass(frozen=True)
class ImportedModel:
    """What import_model() made: the manifest text (canonical JSON) and the import's summary."""

    manifest: str
    name: str
    model_type: str
    recipe: str  # the recipe applied ("auto" resolved)
    tensors: int
    shards: int
    weights: int
    sources: int
    carries: int
    kv_layers: int
    kv_bytes_per_token: int
    layout: str = "checkpoint"
    state_layers: int = 0
    stacks: int = 0  # buffers that stack several tensors (layout="transformers")
    state_bytes_per_sequence: int = 0
    notes: List[str] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)

    def save(self, path: "str | os.PathLike[str]") -> None:
        """Writes the manifest to ``path``."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.manifest)


def import_model(model_dir: "str | os.PathLike[str]", *, recipe: str = "auto",
                 kv_dtype: str = "BF16", max_batch: Optional[int] = None,
                 max_ctx: Optional[int] = None, name: str = "", layout: str = "checkpoint",
                 strict: bool = False,
                 kv_bytes_per_token: Optional[int] = None) -> ImportedModel:
    """Makes a manifest from a Hugging Face model folder (config.json + safetensors headers;
    the tensor data is never read), as `loadplan import` does (docs/import.md).

    ``recipe``: "auto" (from quantization_config), "none", "mxfp4-gpt-oss", "mxfp4-bf16",
    "fp8-keep" or "fp8-bf16"; ``kv_dtype`` the KV cache's element type; ``max_batch`` and
    ``max_ctx`` the variables' upper bounds (default 256 and max_position_embeddings);
    ``layout`` "checkpoint" (names as stored) or "transformers" (as transformers' model classes
    hold them: experts stacked, renames); ``strict`` refuses an unknown model_type, a missing
    config.json or key, and tensors that contradict the config (else notes and warnings);
    ``kv_bytes_per_token`` plans the cache as one buffer of that many bytes per token. The
    options are `loadplan import`'s, one for one. The manifest text goes straight to
    load()/plan()/check(). Raises CheckpointError (an OSError) for a folder that is wrong (a
    broken index, no safetensors; under ``strict`` an unknown model_type or tensors that
    disagree with config.json), OptionError for a bad option.
    """
    d = _loadplan.import_model(os.fspath(model_dir), recipe, kv_dtype.upper(), max_batch,
                               max_ctx, name, layout, strict, kv_bytes_per_token)
    return ImportedModel(**d)


@dataclass(frozen=True)
class ParallelImport:
    """What import_parallel() wrote: deploy.json's path and, per rank, its manifest's path,
    the checkpoint bytes it reads, the tensors it binds whole (replicated) and its experts."""

    deployment: str
    ranks: List[dict]
    model: ImportedModel  # the full import it was split from


def import_parallel(model_dir: "str | os.PathLike[str]", out_dir: "str | os.PathLike[str]", *,
                    tensor_parallel: int = 1, expert_parallel: int = 1, recipe: str = "auto",
                    kv_dtype: str = "BF16", max_batch: Optional[int] = None,
                    max_ctx: Optional[int] = None, name: str = "", layout: str = "checkpoint",
                    strict: bool = False,
                    kv_bytes_per_token: Optional[int] = None) -> ParallelImport:
    """`loadplan import --tensor-parallel T --expert-parallel E -o OUT_DIR`: one manifest per
    rank (rank-0.json, ...), each binding only its slices of the checkpoint, and deploy.json,
    written into ``out_dir`` (made if need be); docs/deploy.md, "Tensor parallel". The other
    options are import_model()'s. ``load(deploy, ckpt, rank=r)`` loads a rank."""
    d = _loadplan.import_parallel(os.fspath(model_dir), tensor_parallel, expert_parallel, recipe,
                                  kv_dtype.upper(), max_batch, max_ctx, name, layout, strict,
                                  kv_bytes_per_token)
    os.makedirs(out_dir, exist_ok=True)
    ranks = []
    for r in d.pop("ranks"):
        path = os.path.join(os.fspath(out_dir), r["file"])
        with open(path, "w", encoding="utf-8") as f:
            f.write(r["manifest"])
        ranks.append({"manifest": path, "name": r["name"], "bytes_read": r["bytes_read"],
                      "replicated": list(r["replicated"]), "experts": list(r["experts"])})
    deployment = os.path.join(os.fspath(out_dir), "deploy.json")
    with open(deployment, "w", encoding="utf-8") as f:
        f.write(d.pop("deployment"))
    return ParallelImport(deployment=deployment, ranks=ranks, model=ImportedModel(**d))

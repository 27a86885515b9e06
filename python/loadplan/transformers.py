"""loadplan.transformers: a Hugging Face model folder -> transformers' own model, loaded by loadplan.

    import loadplan.transformers
    model = loadplan.transformers.from_pretrained("/models/Qwen3-30B-A3B", device=0)
    out = model.generate(ids, max_new_tokens=32)

The folder is imported with ``layout="transformers"`` (the weights named and shaped as
transformers' model classes hold them: MoE experts stacked by the read itself), loaded by
loadplan.load, and handed to a model transformers builds on the meta device while the load
runs. Its parameters *are* loadplan's device memory (zero copy, DLPack); tied weights are
tied; non-persistent buffers (rotary tables) are made on the device by transformers' own
initialisation. transformers and torch are optional dependencies of loadplan: this module
needs both. docs/python.md, "transformers".
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any, Dict, List, Optional, Tuple

from ._errors import LoadplanError
from ._import import ImportedModel, import_model
from ._model import Model, load


class TransformersError(LoadplanError, RuntimeError):
    """transformers is not installed, cannot build the family, or a parameter of the model it
    builds has no tensor in the folder (the message names it)."""


def _require() -> Tuple[Any, Any]:
    try:
        import torch
        import transformers
    except ImportError as e:  # an optional dependency: say which and how
        raise TransformersError(
            f"loadplan.transformers needs torch and transformers ({e.name} is not installed: "
            "pip install torch transformers)") from e
    return torch, transformers


def _config(path: str) -> Any:
    """The folder's config, without a quantization_config: loadplan hands transformers
    dequantized BF16 weights (import --layout transformers chooses the BF16 recipes)."""
    _, transformers = _require()
    config = transformers.AutoConfig.from_pretrained(path)
    for c in (config, getattr(config, "text_config", None)):
        if c is not None and getattr(c, "quantization_config", None) is not None:
            del c.quantization_config
    return config


def model_class(config: Any) -> Any:
    """transformers' causal-LM class for ``config``: AutoModelForCausalLM's, else the first class
    the config's ``architectures`` names (a text model saved from a multimodal family, such as
    ``emu3_text_model``, which the auto mapping does not list). Importing it imports the
    family's modeling code, which is what takes the time on a first call."""
    _, transformers = _require()
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING
    try:
        return MODEL_FOR_CAUSAL_LM_MAPPING[type(config)]
    except KeyError:
        pass
    for name in getattr(config, "architectures", None) or ():
        cls = getattr(transformers, name, None)
        if cls is not None:
            return cls
    raise TransformersError(
        f"transformers {transformers.__version__} has no causal-LM class for model_type "
        f"{getattr(config, 'model_type', '?')!r} (config class {type(config).__name__}, "
        f"architectures {getattr(config, 'architectures', None)})")


def build_meta_model(path: "str | os.PathLike[str]", dtype: Any = None) -> Any:
    """transformers' causal-LM model for the folder's config (model_class), on the meta device
    (no memory), in ``dtype`` (default: the config's dtype, else bfloat16)."""
    torch, transformers = _require()
    config = _config(os.fspath(path))
    dtype = dtype or getattr(config, "dtype", None) or torch.bfloat16
    if isinstance(dtype, str):
        dtype = getattr(torch, dtype)
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING
    by_auto = type(config) in MODEL_FOR_CAUSAL_LM_MAPPING
    cls = None if by_auto else model_class(config)
    try:
        with torch.device("meta"):
            model = (transformers.AutoModelForCausalLM.from_config(config, dtype=dtype) if by_auto
                     else cls._from_config(config, dtype=dtype))
    except Exception as e:  # transformers' own refusal, with the family named
        raise TransformersError(
            f"transformers {transformers.__version__} cannot build a causal LM for model_type "
            f"{getattr(config, 'model_type', '?')!r}: {type(e).__name__}: {e}") from e
    _keep_in_fp32(model, dtype)
    return model


def _keep_in_fp32(model: Any, dtype: Any) -> None:
    """The dtypes transformers' from_pretrained gives where the class asks
    (``_keep_in_fp32_modules_strict`` in BF16/F16, ``_keep_in_fp32_modules`` in F16): the
    meta tensors whose names match take the planned dtype, so attach() converts to it."""
    import re
    torch, _ = _require()
    plan = model._get_dtype_plan(dtype) if hasattr(model, "_get_dtype_plan") else {}
    if not plan:
        return
    rules = [(re.compile(k.replace("*", ".*")), d) for k, d in plan.items()]
    for key, t in model.state_dict(keep_vars=True).items():
        d = next((d for r, d in rules if r.search(key)), None)
        if d is None or not t.is_floating_point() or t.dtype == d:
            continue
        module, attr = _owner(model, key)
        if attr in module._parameters:
            module._parameters[attr] = torch.nn.Parameter(t.to(d), requires_grad=False)
        else:
            module._buffers[attr] = t.to(d)


def _owner(model: Any, key: str) -> Tuple[Any, str]:
    module_name, _, attr = key.rpartition(".")
    return (model.get_submodule(module_name) if module_name else model), attr


def _tied_targets(model: Any) -> List[str]:
    """Names transformers ties to another tensor (lm_head.weight when embeddings are tied)."""
    tied = getattr(model, "all_tied_weights_keys", None) or {}
    return list(tied.keys()) if isinstance(tied, dict) else list(tied)


def _key_for(name: str, expected: Dict[str, Any], prefix: str) -> Optional[str]:
    """The model's key for a loaded tensor: the same name, or with the base model's prefix
    added or removed (a base-model checkpoint in a causal-LM class, and the reverse)."""
    if name in expected:
        return name
    if prefix and f"{prefix}.{name}" in expected:
        return f"{prefix}.{name}"
    if prefix and name.startswith(prefix + ".") and name[len(prefix) + 1:] in expected:
        return name[len(prefix) + 1:]
    return None


def attach(model: Any, tensors: Dict[str, Any], device: Any) -> List[str]:
    """Makes ``tensors`` (name -> torch tensor, already on ``device``) the meta ``model``'s
    parameters and persistent buffers (a floating tensor of another dtype than the model's
    parameter is converted: a copy), ties what transformers ties, and makes the
    non-persistent buffers on ``device`` that make_nonpersistent has not made already.
    Returns the loaded names the model has no place for. Raises TransformersError naming a
    parameter with no tensor, or a shape that differs."""
    torch, _ = _require()
    expected = dict(model.state_dict(keep_vars=True))
    prefix = getattr(model, "base_model_prefix", "") or ""
    unused, placed = [], set()
    for name, t in tensors.items():
        key = _key_for(name, expected, prefix)
        if key is None:
            unused.append(name)
            continue
        want = expected[key]
        if tuple(t.shape) != tuple(want.shape):
            raise TransformersError(
                f"{name}: loadplan loaded {list(t.shape)}, transformers' "
                f"{type(model).__name__} expects {list(want.shape)} for {key}")
        # The model's own dtype for it: the one asked for, or one transformers keeps apart
        # (_keep_in_fp32_modules): a copy, as transformers' from_pretrained makes.
        if t.is_floating_point() and want.is_floating_point() and t.dtype != want.dtype:
            t = t.to(want.dtype)
        module, attr = _owner(model, key)
        if attr in module._parameters:
            p = torch.nn.Parameter(t, requires_grad=False)
            p._is_hf_initialized = True
            module._parameters[attr] = p
        else:
            t._is_hf_initialized = True
            module._buffers[attr] = t
        placed.add(key)
    tied = set(_tied_targets(model))
    missing = [k for k in expected if k not in placed and k not in tied]
    if missing:
        raise TransformersError(
            f"transformers' {type(model).__name__} has {len(missing)} parameter(s) with no tensor "
            f"in the folder: {', '.join(missing[:5])}{', ...' if len(missing) > 5 else ''}")
    model.tie_weights()
    _make_nonpersistent(model, device)
    on_meta = [n for n, x in list(model.named_parameters()) + list(model.named_buffers())
               if x.is_meta]
    if on_meta:
        raise TransformersError(f"still on the meta device after loading: {', '.join(on_meta[:5])}")
    return unused


def make_nonpersistent(model: Any, device: Any) -> bool:
    """The meta ``model``'s non-persistent buffers (rotary inv_freq, ...) on ``device`` before
    any parameter is loaded: from_pretrained runs it on the builder thread, while the load runs,
    so the attach after the load has less to do. They depend on the config alone; one that
    transformers' pass computes from a parameter cannot be made here: then every one of them
    goes back to the meta device and False says attach() makes them after the parameters."""
    torch, _ = _require()
    try:
        _make_nonpersistent(model, device)
        return True
    except Exception:  # computed from a parameter, or not by the pass: attach() decides
        for _, module in model.named_modules():
            for n in getattr(module, "_non_persistent_buffers_set", ()):
                b = module._buffers.get(n)
                if b is not None and not b.is_meta:
                    module._buffers[n] = b.to("meta")
        for m in model.modules():  # the pass runs again, whole, after the parameters
            if hasattr(m, "_is_hf_initialized"):
                del m._is_hf_initialized
        return False


def _make_nonpersistent(model: Any, device: Any) -> None:
    """Non-persistent buffers (rotary inv_freq, Falcon-H1's mup_vector, ...) on ``device``,
    computed by transformers' own initialisation pass, as its from_pretrained does: the
    loaded tensors are marked initialised, so the pass leaves them alone. A floating buffer
    the pass does not write stays NaN and is refused, naming it. Buffers already made (not on
    the meta device) are left alone."""
    torch, _ = _require()
    made = []
    for module_name, module in model.named_modules():
        for n in getattr(module, "_non_persistent_buffers_set", ()):
            b = module._buffers.get(n)
            if b is None or not b.is_meta:
                continue
            module._buffers[n] = (torch.full(b.shape, float("nan"), dtype=b.dtype, device=device)
                                  if b.is_floating_point()
                                  else torch.zeros(b.shape, dtype=b.dtype, device=device))
            made.append((f"{module_name}.{n}" if module_name else n, module, n))
    if not made:
        return
    if hasattr(model, "initialize_weights"):
        model.initialize_weights()
    else:
        model.apply(model._init_weights)
    for where, module, n in made:
        b = module._buffers[n]
        if b.is_floating_point() and bool(torch.isnan(b).any()):
            raise TransformersError(
                f"{where}: a non-persistent buffer transformers' initialisation does not "
                f"compute for {type(module).__name__}; loadplan.transformers cannot make it")


def from_pretrained(path: "str | os.PathLike[str]", device: int = 0, dtype: Any = None, *,
                    recipe: str = "auto", kv_dtype: str = "BF16",
                    max_batch: Optional[int] = None, max_ctx: Optional[int] = None,
                    strict: bool = False, **load_options: Any) -> Any:
    """transformers' own PreTrainedModel for the folder at ``path``, in eval mode, on GPU
    ``device``, its parameters loadplan's device memory.

    ``recipe``, ``kv_dtype``, ``max_batch``, ``max_ctx`` and ``strict`` are import_model's
    (``layout`` is "transformers"); ``load_options`` are load()'s (io_threads, chunk_bytes,
    memory_limit, ...). ``dtype`` (a torch dtype or its name) is the model's; floating tensors
    of another dtype are converted (a copy each). ``model.loadplan_report`` holds the predicted and measured
    peaks, GB/s and the time of each step. Raises TransformersError (no transformers, a family
    it cannot build, a parameter with no tensor) and load()'s exceptions."""
    torch, _ = _require()
    path = os.fspath(path)
    t0 = time.perf_counter()
    built: Dict[str, Any] = {}

    def build() -> None:
        t = time.perf_counter()
        try:
            model = build_meta_model(path, dtype)
            built["early_buffers"] = make_nonpersistent(model, torch.device("cuda", device))
            built["model"] = model
        except BaseException as e:  # re-raised on the caller's thread
            built["error"] = e
        built["s"] = time.perf_counter() - t

    builder = threading.Thread(target=build, name="loadplan-meta-model")
    builder.start()  # transformers builds the meta model while loadplan loads (GIL released)
    try:
        imported: ImportedModel = import_model(path, layout="transformers", recipe=recipe,
                                               kv_dtype=kv_dtype, max_batch=max_batch,
                                               max_ctx=max_ctx, strict=strict)
        t_import = time.perf_counter()
        loaded: Model = load(imported.manifest, path, device, **load_options)
        t_load = time.perf_counter()
    finally:
        builder.join()
    if "error" in built:
        raise built["error"]
    model = built["model"]
    t_attach = time.perf_counter()
    tensors = loaded.state_dict("torch")
    unused = attach(model, tensors, torch.device("cuda", loaded.device))
    model.eval()
    report = dict(loaded.report)
    report.update({
        "import_s": t_import - t0, "load_s": t_load - t_import, "build_meta_s": built["s"],
        "attach_s": time.perf_counter() - t_attach,
        "nonpersistent_while_loading": built["early_buffers"],
        "total_s": time.perf_counter() - t0, "unused": unused, "notes": imported.notes,
        "warnings": imported.warnings, "manifest": imported.manifest,
    })
    model.loadplan_report = report
    model.loadplan_model = loaded  # owns the device memory with the tensors
    return model

"""loadplan: verify, plan and load staged LLM checkpoints into this process (docs/python.md).

    import loadplan, torch
    model = loadplan.load("m2.json", "ckpt/", device=0)
    w = torch.from_dlpack(model["l0.fc1_w"])   # zero copy
"""

from ._check import Diagnostic, Note, check
from ._errors import (CancelledError, CheckpointError, DeviceError, InputFileError,
                      InternalError, LoadplanError, ManifestError, OptionError, OutOfMemoryError)
from ._import import ImportedModel, ParallelImport, import_model, import_parallel
from ._model import Model, load
from ._plan import Phase, Plan, plan

__version__ = "0.1.0"

__all__ = [
    "CancelledError", "CheckpointError", "DeviceError", "Diagnostic", "ImportedModel",
    "InputFileError", "InternalError",
    "LoadplanError", "ManifestError", "Model", "Note", "OptionError", "OutOfMemoryError",
    "Phase", "Plan", "check", "import_model", "import_parallel", "ParallelImport", "load", "plan",
]

# provenance.json of a bridge run, in the engine's shape (docs/formats.md#provenancejson): who wrote it,
# the threads and backend, and what reproduces it: the training script (path, bytes, sha256, as the
# engine names its corpus) and the torch and transformers versions.
from __future__ import annotations

import hashlib
import os
import platform
import sys
from importlib import metadata
from typing import Optional

import torch


def script_path() -> Optional[str]:
    """The running script's absolute path: __main__'s file (python script.py, torchrun, python -m), else
    sys.argv[0] when it is a file; None for an interactive session or `python -c`."""
    main = sys.modules.get("__main__")
    for candidate in (getattr(main, "__file__", None), sys.argv[0] if sys.argv else None):
        if candidate and os.path.isfile(candidate):
            return os.path.abspath(candidate)
    return None


def file_identity(path: str) -> dict:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 16), b""):
            digest.update(chunk)
    return {"path": path, "bytes": os.path.getsize(path), "sha256": digest.hexdigest()}


def package_version(name: str) -> Optional[str]:
    """An installed package's version, or None when it is not installed (read from its metadata: nothing
    is imported)."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def provenance(version: str, device: torch.device) -> dict:
    path = script_path()
    return {"normlab_version": version, "writer": "normlab-torch",
            "threads": torch.get_num_threads(), "backend": f"pytorch ({device.type})",
            "script": file_identity(path) if path else None,
            "torch": torch.__version__, "transformers": package_version("transformers"),
            "python": platform.python_version(), "argv": list(sys.argv[1:]),
            "resumed_from": None, "forked_from": None}

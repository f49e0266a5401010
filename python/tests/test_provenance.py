# A bridge run says what reproduces it: provenance.json names the training script (its path, size and
# sha256, recomputed here from the file), the torch and transformers versions (from the packages'
# metadata) and the bridge's version, in the engine's provenance shape.
import hashlib
import json
import os
from importlib import metadata

import torch

from models import DEVICE
from test_failures import _script


def test_provenance_names_the_script_its_hash_and_the_versions(tmp_path):
    result = _script(tmp_path, """
        with normlab.watch(model, optimizer, out=out, verbose=False):
            loss_of("nanogpt", model, batch(1)).backward(); optimizer.step()
    """)
    assert result.returncode == 0, result.stderr
    record = json.load(open(tmp_path / "run" / "provenance.json"))
    script = tmp_path / "train.py"
    assert record["script"] == {"path": str(script), "bytes": os.path.getsize(script),
                                "sha256": hashlib.sha256(script.read_bytes()).hexdigest()}
    assert record["torch"] == torch.__version__
    assert record["transformers"] == metadata.version("transformers")
    assert record["normlab_version"] == "0.1.0" and record["writer"] == "normlab-torch"
    assert record["resumed_from"] is None and record["forked_from"] is None
    assert record["threads"] >= 1 and record["backend"] == f"pytorch ({DEVICE.type})"


def test_without_a_script_file_the_script_is_null(tmp_path, monkeypatch):
    from normlab import provenance

    monkeypatch.setattr(provenance.sys, "argv", ["-c"])
    monkeypatch.delattr(provenance.sys.modules["__main__"], "__file__", raising=False)
    record = provenance.provenance("0.1.0", torch.device("cpu"))
    assert record["script"] is None and record["argv"] == []


def test_a_missing_package_has_a_null_version():
    from normlab.provenance import package_version

    assert package_version("normlab-no-such-package") is None
    assert package_version("torch") == metadata.version("torch")

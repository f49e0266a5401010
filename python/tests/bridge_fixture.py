# Writes the bridge run folder committed as tests/data/bridge-run (the C++ reader's test input) and
# describes a folder's structure (keys per line), so a test can tell when the bridge's output drifts
# from the committed fixture: `python tests/bridge_fixture.py` regenerates it.
import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "..", "..", "tests", "data", "bridge-run")


def write_run(out):
    sys.path[:0] = [HERE, os.path.dirname(HERE)]
    import normlab
    from models import batch, loss_of, make

    model, optimizer = make("gpt2")
    w = normlab.watch(model, optimizer, out=out, every=2, attn_every=4, verbose=False, overwrite=True)
    for step in range(1, 9):
        loss_of("gpt2", model, batch(step)).backward()
        optimizer.step()
        optimizer.zero_grad()
    w.event("learning rate halved", key="train.lr", value="0.0015")
    w.close()


def _keys(value, prefix=""):
    if isinstance(value, dict):
        return sorted(k for key, inner in value.items() for k in _keys(inner, f"{prefix}{key}."))
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return _keys(value[0], prefix)
    return [prefix.rstrip(".")]


def structure(folder):
    """Per file, the key paths of each line (values left out: they depend on the torch version)."""
    out = {}
    for name in ("config.json", "provenance.json", "summary.json", "metrics.jsonl", "events.jsonl"):
        with open(os.path.join(folder, name)) as f:
            out[name] = [_keys(json.loads(line)) for line in f if line.strip()]
    for key in ("torch.version", "torch.device"):
        assert key in out["config.json"][0]
    return out


if __name__ == "__main__":
    shutil.rmtree(FIXTURE, ignore_errors=True)
    write_run(FIXTURE)
    print(f"wrote {os.path.normpath(FIXTURE)}")

# normlab-cli for the bridge's tests that drive it (sweeps of a user's command, edge searches): where the
# built binary is (NORMLAB_CLI, else the checkout's build/) and one call of it that fails the test with
# its stderr when it exits non-zero.
import os
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def cli_path():
    path = os.environ.get("NORMLAB_CLI") or str(HERE.parents[1] / "build" / "app" / "normlab-cli")
    if not os.access(path, os.X_OK):
        pytest.fail(f"normlab-cli not found at {path}: build NormLab (scripts/test.sh does) or set NORMLAB_CLI")
    return path


def run_cli(*args, env=None, check=True):
    done = subprocess.run([cli_path(), *map(str, args)], capture_output=True, text=True, env=env)
    if check and done.returncode != 0:
        pytest.fail(f"normlab-cli {' '.join(map(str, args))} exited {done.returncode}:\n{done.stderr}")
    return done

# The bridge's tests import normlab from this checkout (tests/run.sh also installs it into the venv)
# and their helper modules from this folder; one thread keeps the numbers and timings steady.
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]
os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch  # noqa: E402

torch.set_num_threads(1)

# The NormLab PyTorch bridge: `normlab.watch(model, optimizer, out=...)` records NormLab's per-block
# telemetry from your own training into a run folder the NormLab window opens and watches live;
# `normlab.load_run(path)` reads any run folder (NormLab's own or the bridge's) into pandas frames.
from .attention import record_attention
from .reader import load_run
from .watch import VERSION as __version__
from .watch import Watch, watch

__all__ = ["watch", "Watch", "load_run", "record_attention", "__version__"]

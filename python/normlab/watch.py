# normlab.watch(): hooks a user's model and optimizer and records NormLab's telemetry into a run folder.
# Steps that log nothing cost a few device additions: no host synchronisation, no collective. A logged
# step's sums go into one packed all-reduce; only rank 0 writes, on a background thread.
from __future__ import annotations

import atexit
import math
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

import torch
import torch.distributed as dist

from . import attention, norms, records
from .layout import build_layout, parallelism
from .measure import RESID, RESID_ATTN, Measurements, local
from .provenance import provenance
from .rules import DivergenceRule, LossSpikeDetector
from .writer import RunWriter, claim_folder

SOURCE = "normlab-torch"
VERSION = "0.1.0"


@dataclass
class _Step:  # one optimizer step waiting for its window to be read back
    step: int
    lr: Any
    loss: torch.Tensor  # (sum, count) of the losses the root module returned
    user: Dict[str, Any]  # what w.log gave: loss, grad_norm, val_loss


@dataclass
class _Logged:  # the device values of a logged step, read back with its window
    step: int
    sums: torch.Tensor  # records.logged_sizes' parts, packed: one SUM over processes
    maxima: torch.Tensor  # Measurements.maxima(): one MAX over processes
    has_adam: bool


def _loss_of(output) -> Optional[torch.Tensor]:
    """The loss a model returned: Hugging Face's .loss, or the first scalar of a tuple (nanoGPT)."""
    loss = getattr(output, "loss", None)
    if isinstance(loss, torch.Tensor) and loss.dim() == 0:
        return loss
    if isinstance(output, (tuple, list)):
        for item in output:
            if isinstance(item, torch.Tensor) and item.dim() == 0 and item.is_floating_point():
                return item
    return None


def _logits_of(output, vocab_size) -> Optional[torch.Tensor]:
    """The logits a model returned: Hugging Face's .logits, the first tensor of at least 2 dimensions of a
    tuple (nanoGPT's (logits, loss)), or the output itself; with a known vocabulary, its last dimension."""
    candidates = [getattr(output, "logits", None), output]
    if isinstance(output, (tuple, list)):
        candidates += list(output)
    for item in candidates:
        if isinstance(item, torch.Tensor) and item.dim() >= 2 and item.is_floating_point() and (
                vocab_size is None or item.shape[-1] == vocab_size):
            return item
    return None


def _first_tensor(value) -> Optional[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, (tuple, list)) and value and isinstance(value[0], torch.Tensor):
        return value[0]
    return None


class Watch:
    def __init__(self, model, optimizer, out, every=10, attn_every=50, attn_rows=256, blocks=None,
                 roles=None, config=None, overwrite=False, update_ratio=True, diverge_loss=3.0,
                 spike_window=50, spike_z=6.0, verbose=True):
        if every < 1 or attn_every < 0 or attn_rows < 1:
            raise ValueError("normlab.watch: every and attn_rows must be at least 1, attn_every at least 0 "
                             "(0: no attention sampling)")
        if not hasattr(optimizer, "register_step_pre_hook"):
            raise ValueError("normlab.watch: the optimizer has no step hooks; it needs torch>=2.4 "
                             f"(this is torch {torch.__version__})")
        self.every, self.attn_every, self.attn_rows = every, attn_every, attn_rows
        self._optimizer = optimizer
        self.update_ratio = update_ratio
        self.world = dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1
        self.rank = dist.get_rank() if self.world > 1 else 0
        self.layout = build_layout(model, blocks, roles)
        self.parallel = parallelism(model, self.layout.root, self.world)
        first = next(self.layout.root.parameters())
        self.device = first.device
        self.measure = Measurements(self.layout, self.world, self.device)
        self.step = 0
        self.closed = False
        self.disabled: Optional[str] = None
        self.diverged_at: Optional[int] = None
        self.first_bad_layer: Optional[int] = None
        self.final_loss: Optional[float] = None
        self.final_val_loss: Optional[float] = None
        self._loss = torch.zeros(2, dtype=torch.float64, device=self.device)
        self._window: List[_Step] = []
        self._logged: Optional[_Logged] = None
        self._pending_user: Dict[str, Any] = {}
        self._last_user_step = 0
        self._spikes = LossSpikeDetector(spike_window, spike_z)
        self._divergence = DivergenceRule(diverge_loss, self.layout.vocab_size)
        self._started = time.time()
        self._window_started = time.perf_counter()
        self._steps_per_s: Optional[float] = None
        self._exception: Optional[BaseException] = None
        self._record = True  # step 1 is logged
        self._sample = attn_every > 0
        self._current_block = -1
        self.writer: Optional[RunWriter] = None
        if self.rank == 0:
            self._open_writer(str(out), overwrite, config or {}, model)
        self._agree_on_start()
        self._module_handles, self._optimizer_handles = ([], []) if self.disabled else self._install(optimizer)
        if verbose and self.rank == 0:
            print(self.layout.describe(), file=sys.stderr, flush=True)
        atexit.register(self._at_exit)
        self._previous_excepthook = sys.excepthook
        sys.excepthook = self._excepthook
        self._stop_on_sigterm()

    # ---- what the user calls -------------------------------------------------------------------
    def log(self, loss=None, grad_norm=None, val_loss=None):
        """Values for the latest optimizer step (call after optimizer.step(); called before it, they
        go to the step it is about to take). grad_norm: the total before clipping, as clip_grad_norm_
        returns it; block gradient norms are then reported before clipping too."""
        values = {k: v for k, v in (("loss", loss), ("grad_norm", grad_norm), ("val_loss", val_loss))
                  if v is not None}
        # Only attaches values: the read-back waits for the next optimizer.step() (or close()), the same
        # point on every rank, so a w.log called on rank 0 alone never pairs its all-reduce with another
        # rank's gradient all-reduce.
        if self.step > self._last_user_step and self._window and self._window[-1].step == self.step:
            self._window[-1].user.update(values)
            self._last_user_step = self.step
        else:
            self._pending_user.update(values)

    def event(self, message, key=None, value=None, kind="change"):
        """A marker of your own (a change of learning rate, data, anything), shown on the charts like a
        live change, at the step it applies from."""
        if self.disabled is None:
            self._event(self.step + 1, kind, str(message), key=key, value=value)

    def close(self, status="completed", error=None):
        """Ends the run: the last steps are written and summary.json says `status` (or `diverged`)."""
        if self.closed:
            return
        self.closed = True
        for handle in self._module_handles + self._optimizer_handles:
            handle.remove()
        attention._sink = None
        if self.disabled is None:
            collective = status == "completed"  # a failing rank must not wait for the others
            self._guarded(lambda: self._flush(collective=collective))
        if self.writer is not None:
            if status in ("failed", "stopped") and self.disabled is None:
                self._event(self.step, status, error or f"the run was {status} at step {self.step}")
            if self.diverged_at is not None:
                status = "diverged"
            elif self.disabled is not None:  # what was recorded ends early: say why
                status, error = "failed", f"the bridge stopped recording: {self.disabled}"
            self.writer.summary(self._summary(status, error))
            self.writer.close()
        sys.excepthook = self._previous_excepthook

    def __enter__(self):
        return self

    def __exit__(self, kind, value, traceback):
        if kind is None:
            self.close()
        elif issubclass(kind, (KeyboardInterrupt, SystemExit)):  # Ctrl-C, SIGTERM, sys.exit
            self.close("stopped")
        else:
            self.close("failed", f"{kind.__name__}: {value}")
        return False

    # ---- setup ---------------------------------------------------------------------------------
    def _open_writer(self, out, overwrite, user_config, model):
        try:
            claim_folder(out, overwrite)
            self.writer = RunWriter(out, self._config(user_config, model), provenance(VERSION, self.device))
            self.writer.summary(self._summary("running"))
        except OSError as problem:
            self.disabled = f"cannot write the run folder {out} ({problem})"
            print(f"normlab: {self.disabled}; the bridge records nothing", file=sys.stderr, flush=True)

    def _agree_on_start(self):
        """Every rank records, or none does: a rank that skipped the collectives would hang the rest."""
        if self.world == 1:
            return
        failed = torch.tensor([1.0 if self.disabled else 0.0], device=self.device)
        dist.all_reduce(failed, op=dist.ReduceOp.MAX)
        if failed.item() > 0 and self.disabled is None:
            self.disabled = "rank 0 cannot write the run folder"

    def _config(self, user_config, model):
        root = self.layout.root
        config = getattr(root, "config", None)
        d_model = getattr(config, "hidden_size", None) or getattr(config, "n_embd", None)
        if d_model is None:
            norm = self.layout.roles[0].get("norm1")
            d_model = norm[0].shape[0] if norm else None
        shape = {"layers": len(self.layout.blocks), "d_model": d_model, "heads": self.layout.heads,
                 "vocab_size": self.layout.vocab_size, "norm_type": self.layout.norm_type}
        return {"source": SOURCE, "bridge_version": VERSION,
                "model": {k: v for k, v in shape.items() if v is not None},
                "architecture": {"class": type(root).__name__, "family": self.layout.family,
                                 "blocks": self.layout.block_names[0].rsplit(".", 1)[0]},
                "telemetry": {"every": self.every, "attn_every": self.attn_every, "attn_rows": self.attn_rows},
                "torch": {"version": torch.__version__, "world_size": self.world, "parallel": self.parallel,
                          "compiled": hasattr(model, "_orig_mod"), "device": str(self.device)},
                "user": user_config}

    def _install(self, optimizer):
        handles = []
        layout = self.layout
        for b, block in enumerate(layout.blocks):
            for module in block.modules():
                module._normlab_block = b
            handles.append(block.register_forward_pre_hook(self._block_enter(b)))
            handles.append(block.register_forward_hook(self._resid_hook(b, RESID)))
            if layout.attn_sum_inputs[b] is not None:
                handles.append(layout.attn_sum_inputs[b].register_forward_pre_hook(self._attn_sum_hook(b)))
            if layout.qkv_split[b] is not None:
                n_head = layout.blocks[b].attn.n_head
                handles.append(layout.qkv_split[b].register_forward_hook(
                    attention.qkv_split_hook(n_head, self._sample_attention)))
            for role, (module, kind) in layout.norms[b].items():
                handles.append(module.register_forward_pre_hook(self._norm_hook(b, role, kind)))
        if layout.final_norm is not None:
            module, kind = layout.final_norm
            handles.append(module.register_forward_pre_hook(self._norm_hook(None, None, kind)))
        if layout.hf_attention and self.attn_every > 0:
            attention.install_hf_interface(layout.root)
        attention._sink = self._sample_attention
        handles.append(layout.root.register_forward_hook(self._loss_hook))
        return handles, [optimizer.register_step_pre_hook(self._before_step),
                         optimizer.register_step_post_hook(self._after_step)]

    # ---- hooks (traced by torch.compile: tensor work only, flags read, nothing synchronised) -------
    def _training(self, module) -> bool:
        return module.training and torch.is_grad_enabled()

    def _block_enter(self, b):
        def hook(module, args):
            self._current_block = b

        return hook

    def _resid_hook(self, b, column):
        def hook(module, args, output):
            if self._record and self._training(module):
                hidden = _first_tensor(output)
                if hidden is not None:
                    self.measure.add_resid(b, hidden, column)

        return hook

    def _attn_sum_hook(self, b):
        def hook(module, args):
            if self._record and self._training(module) and args:
                self.measure.add_resid(b, args[0], RESID_ATTN)

        return hook

    def _norm_hook(self, b, role, kind):
        def hook(module, args):
            if self._record and self._training(module) and args:
                self.measure.add_norm_scale(b, role, norms.token_scales(args[0], kind))

        return hook

    def _sample_attention(self, module, q, k, scale, mask, causal):
        if not (self._sample and torch.is_grad_enabled()):
            return
        b = getattr(module, "_normlab_block", None) if module is not None else self._current_block
        if b is None or b < 0:
            return
        entropy, rows, head_largest = attention.attention_sample_stats(q, k, scale, mask, causal, self.attn_rows)
        self.measure.add_attention(b, entropy, rows, head_largest)
        self.measure.add_qk(b, q, k)

    def _loss_hook(self, module, args, output):
        if self._training(module):
            loss = _loss_of(output)
            if loss is not None:
                self._loss[0] += loss.detach().double()
                self._loss[1] += 1
            logits = _logits_of(output, self.layout.vocab_size) if self._record else None
            if logits is not None:
                self.measure.add_logits(logits)

    # ---- optimizer hooks (eager) -----------------------------------------------------------------
    def _is_logged(self, step):  # a sampled step is a logged step too
        return step == 1 or step % self.every == 0 or self._is_sampled(step)

    def _is_sampled(self, step):
        return self.attn_every > 0 and (step == 1 or step % self.attn_every == 0)

    def _before_step(self, optimizer, args, kwargs):
        if self.disabled is None:
            self._guarded(lambda: self._prepare(optimizer))

    def _prepare(self, optimizer):
        if self._logged is not None:
            self._flush()  # the previous logged step: its w.log values have come by now
        step = self.step + 1
        lr = optimizer.param_groups[0].get("lr") if optimizer.param_groups else None
        self._window.append(_Step(step, lr, None, dict(self._pending_user)))
        self._pending_user = {}
        if self._is_logged(step):
            self._grads = self.measure.grad_squares()
            if self.update_ratio:
                self.measure.snapshot()

    def _after_step(self, optimizer, args, kwargs):
        if self.disabled is None:
            self._guarded(self._finish_step)

    def _finish_step(self):
        self.step += 1
        entry = self._window[-1]
        entry.loss = self._loss.clone()
        self._loss.zero_()
        if self._is_logged(self.step):
            self._logged = self._pack_logged()
            self.measure.reset_step()
        self._record = self._is_logged(self.step + 1)
        self._sample = self._is_sampled(self.step + 1)

    def _pack_logged(self) -> _Logged:
        """The logged step's device values, packed for its read-back (in records.logged_sizes' order)."""
        measure = self.measure
        updates = measure.update_squares() if self.update_ratio else torch.zeros(
            2 * measure.blocks, dtype=torch.float64, device=self.device)
        adam = measure.second_moments(self._optimizer)
        parts = [measure.acts.flatten(), measure.run_acts, self._grads, updates]
        return _Logged(self.step, torch.cat(parts + ([adam] if adam is not None else [])), measure.maxima(),
                       adam is not None)

    # ---- reading a window back and writing it -----------------------------------------------------
    def _flush(self, collective=True):
        """Reads back every step since the last flush (one all-reduce) and hands records to the writer."""
        window, logged = self._window, self._logged
        if window and window[-1].loss is None:
            window = window[:-1]  # a step whose optimizer.step() has not finished
        if not window:
            return
        self._window = self._window[len(window):]
        self._logged = None
        losses = torch.stack([self._loss_pair(s) for s in window]).flatten()
        vals = torch.stack([self._pair(s.user.get("val_loss")) for s in window]).flatten()
        parts = [losses, vals, torch.tensor([1.0 if self._writer_failed() else 0.0], dtype=torch.float64,
                                            device=self.device)]
        if logged is not None:
            parts = [logged.sums] + parts
        packed = torch.cat(parts)
        reduce = collective and self.world > 1
        if reduce:
            dist.all_reduce(packed)
            if logged is not None:
                dist.all_reduce(logged.maxima, op=dist.ReduceOp.MAX)
        host = packed.tolist()
        user_norms = self._host_values([s.user.get("grad_norm") for s in window])
        lrs = self._host_values([s.lr for s in window])
        if host[-1] > 0:
            self._disable("the run folder could not be written on rank 0")
            return
        if self.writer is None:
            return
        values = None
        if logged is not None:
            count = logged.sums.numel()
            values = records.split_logged(host[:count], logged.maxima.tolist(), self.measure.block_numel,
                                          logged.has_adam)
            host = host[count:]
        now = time.perf_counter()
        self._steps_per_s = len(window) / max(now - self._window_started, 1e-9)
        self._window_started = now
        lines = [self._line(s, host, i, len(window), lrs[i], user_norms[i],
                            values if logged is not None and s.step == logged.step else None)
                 for i, s in enumerate(window)]
        self.writer.metrics(lines)
        self.writer.summary(self._summary("running"))

    def _line(self, s, host, i, count, lr, user_norm, logged: Optional[records.Logged]):
        line = {"step": s.step}
        loss_sum, loss_count = host[2 * i], host[2 * i + 1]
        loss = loss_sum / loss_count if loss_count > 0 else None
        if loss is not None:
            line["loss"] = loss
            self.final_loss = loss if math.isfinite(loss) else self.final_loss
        if lr is not None:
            line["lr"] = lr
        val_sum, val_count = host[2 * count + 2 * i], host[2 * count + 2 * i + 1]
        if val_count > 0:
            line["val_loss"] = val_sum / val_count
            if math.isfinite(line["val_loss"]):
                self.final_val_loss = line["val_loss"]
        if user_norm is not None:
            line["grad_norm"] = user_norm
        reason, block = None, None
        if logged is not None:
            total_square = logged.grad_total_square
            scale = records.clip_scale(user_norm, total_square)
            line.setdefault("grad_norm", math.sqrt(total_square) if total_square >= 0 else float("nan"))
            line["steps_per_s"] = self._steps_per_s
            line.update(records.run_record(logged.run))
            has_attn_sum = [m is not None for m in self.layout.attn_sum_inputs]
            line["layers"] = [records.layer_record(v, self.measure.roles_present, scale, has_attn_sum[b],
                                                   self.update_ratio) for b, v in enumerate(logged.blocks)]
            if not math.isfinite(total_square) or not all(records.resid_finite(v) for v in logged.blocks):
                reason, block = "non-finite gradient or residual sum", records.first_bad_block(logged.blocks)
        if loss is not None:
            reason = self._divergence.reason(loss) if reason is None or not math.isfinite(loss) else reason
            z = self._spikes.observe(loss)
            if z > 0:
                self._event(s.step, "loss_spike", f"loss spike at step {s.step}: loss {loss:g} (z = {z:.3g})")
        if reason is not None and self.diverged_at is None:
            self.diverged_at, self.first_bad_layer = s.step, block
            where = f", first in block {block}" if block is not None else ""
            self._event(s.step, "diverged", f"training diverged at step {s.step}: {reason}{where}", block=block)
        return line

    # ---- helpers ---------------------------------------------------------------------------------
    def _loss_pair(self, s: _Step) -> torch.Tensor:
        if "loss" in s.user:
            return self._pair(s.user["loss"])
        return s.loss

    def _pair(self, value) -> torch.Tensor:
        """(value, 1) as a float64 device tensor, or (0, 0) for nothing."""
        if value is None:
            return torch.zeros(2, dtype=torch.float64, device=self.device)
        if isinstance(value, torch.Tensor):
            value = local(value.detach()).to(device=self.device, dtype=torch.float64).reshape(())
            return torch.stack([value, torch.ones((), dtype=torch.float64, device=self.device)])
        return torch.tensor([float(value), 1.0], dtype=torch.float64, device=self.device)

    @staticmethod
    def _host_values(values):
        """Floats (None kept) of values that may be tensors (lr, clip_grad_norm_'s result), with the
        tensors copied to the host together: one synchronisation, not one per step."""
        tensors = [i for i, v in enumerate(values) if isinstance(v, torch.Tensor)]
        out = [None if v is None else (v if i in tensors else float(v)) for i, v in enumerate(values)]
        if tensors:
            stacked = torch.stack([local(values[i].detach()).float().reshape(()) for i in tensors])
            for i, value in zip(tensors, stacked.cpu().tolist()):
                out[i] = value
        return out

    def _writer_failed(self) -> bool:
        return self.writer is not None and self.writer.error is not None

    def _event(self, step, kind, message, block=None, key=None, value=None):
        """One events.jsonl record (rank 0 writes; the others have no writer)."""
        if self.writer is not None:
            record = {"step": step, "kind": kind, "message": message}
            if kind == "diverged":
                record["block"] = block
            if key is not None:
                record["key"] = str(key)
            if value is not None:  # a number stays a number (a finite one: JSON has no NaN)
                numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
                record["value"] = value if numeric and math.isfinite(value) else str(value)
            self.writer.event(record)

    def _summary(self, status, error=None):
        summary = {"status": status, "steps": self.step, "final_loss": self.final_loss,
                   "final_val_loss": self.final_val_loss,
                   "diverged_at": self.diverged_at, "first_bad_layer": self.first_bad_layer,
                   "steps_per_s": self._steps_per_s, "wall_seconds": time.time() - self._started,
                   "heartbeat": time.time(), "source": SOURCE, "device": str(self.device)}
        if error:
            summary["error"] = error
        return summary

    def _guarded(self, work):
        """Runs bridge work; a failure of the bridge is reported once and turns it off, never raised
        into the training loop."""
        try:
            work()
        except Exception as problem:  # noqa: BLE001 - the user's training must go on
            self._disable(f"{type(problem).__name__}: {problem}")

    def _disable(self, reason):
        if self.disabled is not None:
            return
        self.disabled = reason
        # Module hooks go; the optimizer hooks stay (removing them from inside one of them would break
        # the optimizer's own loop over its hooks) but do nothing from now on.
        for handle in self._module_handles:
            handle.remove()
        attention._sink = None
        self._record = self._sample = False
        if self._writer_failed():
            return  # the writer has already said so, once, on stderr and as an event
        print(f"normlab: the bridge stopped recording: {reason}", file=sys.stderr, flush=True)
        self._event(self.step, "failed", f"the bridge stopped recording: {reason}")

    def _stop_on_sigterm(self):
        """SIGTERM (Slurm's preemption and time limit, torchrun stopping its workers, `kill`) would end
        Python without its exit handlers and leave summary.json saying `running`: unless the script
        handles SIGTERM itself, it exits as after Ctrl-C, and the run ends `stopped`."""
        if threading.current_thread() is not threading.main_thread():
            return
        if signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None):
            signal.signal(signal.SIGTERM, _exit_on_sigterm)

    def _excepthook(self, kind, value, traceback):
        self._exception = value
        self._previous_excepthook(kind, value, traceback)

    def _at_exit(self):
        if self.closed:
            return
        if self._exception is not None and not isinstance(self._exception, KeyboardInterrupt):
            self.close("failed", f"{type(self._exception).__name__}: {self._exception}")
        else:
            self.close("stopped")


def _exit_on_sigterm(signum, frame):
    raise SystemExit(128 + signum)  # the exit handlers run: the run ends `stopped`


def watch(model, optimizer, out=None, **options) -> Watch:
    """Records NormLab's telemetry of `model` trained by `optimizer` into the run folder `out` (default:
    $NORMLAB_RUN_DIR, the folder `normlab-cli sweep` gives each point of a sweep over your command).
    Call before the first forward (and before torch.compile); see docs/bridge.md for every option."""
    return Watch(model, optimizer, _run_folder(out), **options)


def _run_folder(out):
    if out is not None:
        return out
    folder = os.environ.get("NORMLAB_RUN_DIR")
    if not folder:
        raise ValueError("normlab.watch: name the run folder, e.g. watch(model, optimizer, out=\"runs/exp1\") "
                         "(a normlab-cli sweep over your command sets NORMLAB_RUN_DIR instead)")
    return folder

# Writes one run folder in NormLab's contract (docs/formats.md): config.json and provenance.json once,
# metrics.jsonl and events.jsonl appended a line at a time and flushed, summary.json replaced atomically.
# Writing happens on a background thread so the disk never blocks training; a failure is reported once.
from __future__ import annotations

import json
import math
import os
import queue
import socket
import sys
import threading
from typing import Optional

WRITER_LOCK = ".writer"


def finite_or_none(value):
    """JSON has no NaN or Infinity: NormLab writes non-finite numbers as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite_or_none(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_or_none(v) for v in value]
    return value


def dumps(record) -> str:
    return json.dumps(finite_or_none(record), separators=(",", ":"), allow_nan=False)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _live_writer(lock: str) -> Optional[str]:
    """Who holds the lock, when that writer may still be alive (another host cannot be checked)."""
    try:
        with open(lock) as f:
            fields = f.read().split()
    except OSError:
        return None
    if len(fields) < 2 or not fields[1].isdigit():
        return None
    host, pid = fields[0], int(fields[1])
    if host != socket.gethostname():
        return f"process {pid} on {host}"
    if pid == os.getpid():
        return "this process (another normlab.watch)"
    return f"process {pid}" if _pid_alive(pid) else None


def claim_folder(out: str, overwrite: bool) -> None:
    """Makes `out` (new or empty; an old run is replaced only with overwrite=True) and takes its writer
    lock (O_EXCL); raises ValueError when a live writer holds it or an old run is in the way."""
    os.makedirs(out, exist_ok=True)
    lock = os.path.join(out, WRITER_LOCK)
    holder = _live_writer(lock)
    if holder is not None and not overwrite:
        raise ValueError(f"normlab.watch: {out} is being written by {holder}; choose another out= folder "
                         f"(or pass overwrite=True if that writer is gone)")
    existing = [n for n in ("config.json", "metrics.jsonl", "summary.json") if os.path.exists(os.path.join(out, n))]
    if existing and not overwrite:
        raise ValueError(f"normlab.watch: {out} already holds a run ({existing[0]}); pass overwrite=True "
                         "or choose another out= folder")
    for name in ("config.json", "provenance.json", "metrics.jsonl", "events.jsonl", "summary.json", WRITER_LOCK):
        if os.path.lexists(os.path.join(out, name)):
            os.remove(os.path.join(out, name))
    descriptor = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    with os.fdopen(descriptor, "w") as f:
        f.write(f"{socket.gethostname()} {os.getpid()}\n")


class RunWriter:
    def __init__(self, out: str, config: dict, provenance: dict):
        self.out = out
        self.error: Optional[str] = None
        self._queue: "queue.Queue" = queue.Queue()
        self._files = {}
        self._write_atomic("config.json", config)
        self._write_atomic("provenance.json", provenance)
        self._thread = threading.Thread(target=self._run, name="normlab-writer", daemon=True)
        self._thread.start()

    # Called from the training thread: they only queue the records; JSON is made on the writer's thread.
    def metrics(self, lines):
        self._queue.put(("append", "metrics.jsonl", lines))

    def event(self, record):
        self._queue.put(("append", "events.jsonl", [record]))

    def summary(self, record):
        self._queue.put(("summary", "summary.json", record))

    def close(self, timeout: float = 30.0):
        self._queue.put(None)
        self._thread.join(timeout)
        for f in self._files.values():
            try:
                f.close()
            except OSError:
                pass
        try:
            os.remove(os.path.join(self.out, WRITER_LOCK))
        except OSError:
            pass

    def _write_atomic(self, name, record):
        path = os.path.join(self.out, name)
        temporary = f"{path}.tmp{os.getpid()}"
        with open(temporary, "w") as f:
            f.write(dumps(record) + "\n")
        os.replace(temporary, path)

    def _append(self, name, text):
        f = self._files.get(name)
        if f is None:
            f = self._files[name] = open(os.path.join(self.out, name), "a")
        f.write(text)
        f.flush()

    def _run(self):
        while True:
            item = self._queue.get()
            if item is None:
                return
            if self.error is not None:
                continue  # writing stopped at the first failure; the rest is dropped
            kind, name, payload = item
            try:
                if kind == "append":
                    self._append(name, "".join(dumps(record) + "\n" for record in payload))
                else:
                    self._write_atomic(name, payload)
            except OSError as problem:
                self._fail(f"writing {name} failed ({problem}); the bridge stopped recording")

    def _fail(self, message):
        self.error = message
        print(f"normlab: {self.out}: {message}", file=sys.stderr, flush=True)
        try:  # the event may still fit (a full disk often takes a short line); never raise from here
            with open(os.path.join(self.out, "events.jsonl"), "a") as f:
                f.write(dumps({"step": 0, "kind": "failed", "message": message}) + "\n")
        except OSError:
            pass

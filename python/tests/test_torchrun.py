# The documented commands work as written: the example trains under torchrun with 2 processes, and the
# NormLab window follows that run live (normlab --open DIR --quit-after-steps N) while it is written.
import os
import subprocess
import sys
import time

import normlab
from test_contract import cli  # noqa: F401 - the fixture that finds normlab-cli

PYTHON_DIR = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
EXAMPLE = os.path.join(PYTHON_DIR, "examples", "train_gpt2.py")


def torchrun(out, steps, processes=2):
    torchrun = os.path.join(os.path.dirname(sys.executable), "torchrun")
    env = {**os.environ, "PYTHONPATH": PYTHON_DIR, "OMP_NUM_THREADS": "1", "GLOO_SOCKET_IFNAME": "lo"}
    return subprocess.Popen([torchrun, "--standalone", f"--nproc-per-node={processes}", EXAMPLE, "--out", str(out),
                             "--steps", str(steps)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)


def test_the_torchrun_example_writes_a_two_process_run(tmp_path):
    process = torchrun(tmp_path / "run", 12)
    output = process.communicate(timeout=300)[0]
    assert process.returncode == 0, output
    run = normlab.load_run(tmp_path / "run")
    assert run.config["torch"]["world_size"] == 2 and run.config["torch"]["parallel"] == "ddp"
    assert run.summary["status"] == "completed" and list(run.steps.index) == list(range(1, 13))
    assert run.steps.loss.iloc[-1] < run.steps.loss.iloc[0]
    assert output.count("normlab: 4 blocks (gpt2)") == 1  # rank 0 alone prints the mapping


def test_the_window_follows_a_bridge_run_while_it_is_written(tmp_path, cli):
    window = os.path.join(os.path.dirname(cli), "normlab")
    process = torchrun(tmp_path / "run", 400)
    try:
        deadline = time.time() + 120
        while not (tmp_path / "run" / "metrics.jsonl").exists() and time.time() < deadline:
            time.sleep(0.1)
        result = subprocess.run([window, "--open", str(tmp_path / "run"), "--quit-after-steps", "150",
                                 "--screenshot", str(tmp_path / "live.png"), "--size", "1200x800"],
                                env={**os.environ, "QT_QPA_PLATFORM": "offscreen"}, capture_output=True,
                                text=True, timeout=300)
        assert result.returncode == 0, result.stderr
        assert (tmp_path / "live.png").stat().st_size > 10_000
        assert process.poll() is None or process.returncode == 0
    finally:
        process.communicate(timeout=300)
    assert normlab.load_run(tmp_path / "run").summary["steps"] == 400

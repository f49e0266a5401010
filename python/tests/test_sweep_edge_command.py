# `normlab-cli sweep edge --command`: the edge search run on a user's own PyTorch script through the
# bridge. The script trains a tiny nanoGPT and reports a non-finite loss from step 6 on when its --lr
# is above a limit of its own per --norm (a stand-in for a script that blows up above a known learning
# rate), so the edge each variant must find is known: within the tolerance below that limit, every
# probe's verdict the bridge's summary.json, the edge ratio the limits' ratio; running it again runs no
# probe twice; bad input is exit 2 naming what to change, with nothing written.
import json
import os
import sys
import textwrap
from pathlib import Path

from cli_runner import run_cli

HERE = Path(__file__).resolve().parent
LIMITS = {"layernorm": 0.05, "rmsnorm": 0.2}
TOLERANCE = 0.25

SCRIPT = textwrap.dedent("""\
    import argparse, os, sys
    sys.path.insert(0, {tests!r})
    import torch
    import normlab
    from models import NanoGPT, batch

    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float)
    parser.add_argument("--norm")
    parser.add_argument("--seed", type=int)
    args = parser.parse_args()
    with open(os.environ["SWEEP_STARTS"], "a") as starts:
        starts.write(os.environ["NORMLAB_RUN_DIR"] + "\\n")
    limit = {limits!r}[args.norm]
    torch.manual_seed(args.seed)
    model = NanoGPT()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    with normlab.watch(model, optimizer, every=4, verbose=False) as w:
        for step in range(12):
            loss = model(batch(step)[:, :-1], batch(step)[:, 1:])[1]
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            w.log(loss=loss.item() if args.lr <= limit or step < 5 else float("nan"))
""")


def command_of(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT.format(tests=str(HERE), limits=LIMITS))
    return f"{sys.executable} {script} --lr {{user.lr}} --norm {{user.norm}} --seed {{seed}}"


def edge_env(tmp_path):
    return dict(os.environ, SWEEP_STARTS=str(tmp_path / "starts.txt"), PYTHONPATH=str(HERE.parent))


def starts(tmp_path):
    return (tmp_path / "starts.txt").read_text().splitlines()


def test_the_edge_of_a_user_script_is_found_per_variant_and_resumes_without_rerunning(tmp_path):
    edge = tmp_path / "E"
    arguments = ["sweep", "edge", "--command", command_of(tmp_path), "--axis", "user.lr=1e-3:1",
                 "--vary", "user.norm=layernorm,rmsnorm", "--criterion", "diverged", "--seeds", "2",
                 "--tolerance", f"{100 * TOLERANCE:g}%", "--jobs", "2", "--quiet", "--out", edge]
    run_cli(*arguments, env=edge_env(tmp_path))
    result = json.loads((edge / "edge_result.json").read_text())
    assert result["finished"] and result["key"] == "user.lr", result
    for variant in result["variants"]:
        limit = LIMITS[variant["label"]]
        assert limit / (1 + TOLERANCE) <= variant["edge"]["value"] <= limit, variant
        for seed in variant["seeds"]:
            assert seed["first_fail"] / seed["last_pass"] <= 1 + TOLERANCE + 1e-9, seed
            for probe in seed["probes"]:  # each verdict is the bridge's: diverged above the limit
                assert probe["diverged"] == (probe["value"] > limit), probe
                assert probe["passed"] == (probe["value"] <= limit), probe
    ratio = result["ratios"][0]
    assert (ratio["label"], ratio["reference"]) == ("rmsnorm", "layernorm"), ratio
    assert 4 / (1 + TOLERANCE) <= ratio["value"] <= 4 * (1 + TOLERANCE), ratio
    # every probe is a point of a command sweep: the command with the variant's value quoted into it
    for search in (edge / "searches").iterdir():
        plan = json.loads((search / "sweep.json").read_text())
        assert plan["spec"]["command"].endswith("--seed {seed}"), plan["spec"]
        for point in (search / "runs").iterdir():
            summary = json.loads((point / "summary.json").read_text())
            assert summary["status"] in ("completed", "diverged"), (point, summary)
            norm = search.name.split("-s")[0]
            assert f"--norm '{norm}'" in (point / "command.txt").read_text()
    ran = starts(tmp_path)
    assert len(ran) == len(set(ran)), "a probe ran twice"

    again = run_cli("sweep", "edge", edge, "--json", env=edge_env(tmp_path))
    assert starts(tmp_path) == ran, "continuing a finished search ran probes again"
    assert json.loads(again.stdout)["variants"] == result["variants"]


def test_a_command_edge_search_refuses_what_it_cannot_run(tmp_path):
    out = tmp_path / "never"
    command = "python t.py --lr {user.lr} --seed {seed}"
    base = ["--criterion", "diverged", "--out", out]
    for arguments, words in [
        (["--command", command, "--axis", "train.lr=1e-3:1"], "user.NAME"),
        (["--command", command, "--axis", "user.lr=1e-3:1", "--preset", "quickstart"], "--preset"),
        (["--command", command, "--axis", "user.lr=1e-3:1", "--set", "train.steps=5"], "--set"),
        (["--command", command, "--axis", "user.lr=1e-3:1", "--vary", "user.norm=a,b"],
         "user.norm is not in the sweep's command"),
        (["--command", command, "--axis", "user.lr=1e-3:1", "--vary", "model.norm_type=rmsnorm"], "--vary"),
        (["--command", "python t.py --seed {seed}", "--axis", "user.lr=1e-3:1"],
         "user.lr is not in the sweep's command"),
    ]:
        done = run_cli("sweep", "edge", *arguments, *base, check=False)
        assert done.returncode == 2 and words in done.stderr, (arguments, done.stderr)
        assert not out.exists(), arguments

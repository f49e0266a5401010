# The bridge's folders are NormLab run folders: what it writes has the committed fixture's structure
# (tests/data/bridge-run, which the C++ reader's test reads), NormLab's own reader (normlab-cli export
# --metrics) reads back the values the bridge wrote, and load_run reads an engine-written folder too.
import csv
import json
import math
import os
import subprocess

import pytest

import normlab
from bridge_fixture import FIXTURE, structure, write_run

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# The per-block fields of the bridge that NormLab's flat table has a column for (attn_head_max_logit has
# none: the table holds one value per block).
BLOCK_FIELDS = ("resid", "resid_attn", "update_ratio", "update_rms", "adam_grad_rms", "adam_eps_fraction",
                "attn_entropy",
                "attn_max_logit", "q_rms", "k_rms", "norm1_scale_mean", "norm1_scale_cv", "norm2_scale_mean",
                "norm2_scale_cv")
RUN_FIELDS = ("log_z_mean", "log_z_max_abs", "logit_mean", "logit_max", "final_norm_scale_mean",
              "final_norm_scale_cv")


@pytest.fixture(scope="module")
def cli():
    path = os.environ.get("NORMLAB_CLI") or os.path.join(ROOT, "build", "app", "normlab-cli")
    if not os.access(path, os.X_OK):
        pytest.fail(f"normlab-cli not found at {path}: build NormLab (scripts/test.sh does) or set NORMLAB_CLI")
    return path


def test_the_bridge_writes_what_the_committed_fixture_holds(tmp_path):
    write_run(str(tmp_path / "run"))
    fresh, committed = structure(tmp_path / "run"), structure(FIXTURE)
    assert fresh == committed, "the bridge's output changed: regenerate with python tests/bridge_fixture.py"


def exported_rows(tmp_path, cli):
    """A fresh bridge run and NormLab's CSV export of it, by (step, block); block -1 is the step's row."""
    write_run(str(tmp_path / "run"))
    subprocess.run([cli, "export", "--run", str(tmp_path / "run"), "--metrics", "--format", "csv",
                    "--out", str(tmp_path / "m.csv")], check=True, capture_output=True)
    return {(int(r["step"]), int(r["block"])): r for r in csv.DictReader(open(tmp_path / "m.csv"))}


def test_normlab_reads_back_the_values_the_bridge_wrote(tmp_path, cli):
    rows = exported_rows(tmp_path, cli)
    checked = 0
    for line in open(tmp_path / "run" / "metrics.jsonl"):
        record = json.loads(line)
        assert math.isclose(float(rows[(record["step"], -1)]["loss"]), record["loss"], rel_tol=1e-12)
        for block, layer in enumerate(record.get("layers", [])):
            row = rows[(record["step"], block)]
            for field in BLOCK_FIELDS:
                if field in layer:
                    assert math.isclose(float(row[field]), layer[field], rel_tol=1e-12), field
                    checked += 1
            for role, value in layer["grad"].items():
                assert math.isclose(float(row[f"grad.{role}"]), value, rel_tol=1e-12), role
                checked += 1
    assert checked > 200


def test_normlab_reads_back_the_output_logits_the_bridge_wrote(tmp_path, cli):
    rows = exported_rows(tmp_path, cli)
    checked = 0
    for line in open(tmp_path / "run" / "metrics.jsonl"):
        record = json.loads(line)
        for field in RUN_FIELDS:
            if field in record:
                cell = rows[(record["step"], -1)][field]
                assert cell != "", f"step {record['step']}: {field} written but exported empty"
                assert math.isclose(float(cell), record[field], rel_tol=1e-12), field
                checked += 1
    assert checked > 20


def test_fields_the_bridge_never_wrote_export_empty(tmp_path, cli):
    rows = exported_rows(tmp_path, cli)
    logged = [row for (step, block), row in rows.items() if block >= 0]
    for field in ("grad.norm1_out", "grad.norm2_out", "dependency.attn", "dependency.ffn", "norm1_out_scale_mean",
                  "contribution.attn"):
        assert {row[field] for row in logged} == {""}, f"{field} exported as {logged[0][field]!r}"
    # the step's own measured scalars: empty on the lines that lack them, as written on the others
    lines = [json.loads(line) for line in open(tmp_path / "run" / "metrics.jsonl")]
    for field in ("grad_norm", "steps_per_s"):
        without = [line["step"] for line in lines if field not in line]
        written = [line for line in lines if field in line]
        assert without and written, field  # the fixture's run has both kinds of line
        assert {rows[(step, -1)][field] for step in without} == {""}, field
        for line in written:
            assert math.isclose(float(rows[(line["step"], -1)][field]), line[field], rel_tol=1e-12), field


def test_load_run_reads_an_engine_run(tmp_path, cli):
    out = tmp_path / "engine"
    subprocess.run([cli, "train", "--preset", "quickstart", "--steps", "12", "--set", "telemetry.every=4",
                    "--out", str(out)], check=True, capture_output=True)
    run = normlab.load_run(out)
    assert run.summary["status"] == "completed" and list(run.steps.index) == list(range(1, 13))
    assert sorted(set(run.blocks.step)) == [1, 4, 8, 12]
    assert run.blocks.groupby("step").size().iloc[0] == run.config["model"]["layers"]
    assert (run.blocks["grad.w_qkv"] > 0).all() and run.blocks["attn_entropy"].notna().all()

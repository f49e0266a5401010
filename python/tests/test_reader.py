# normlab.load_run's frames, on a run folder written here by hand: steps is indexed by step (no step
# column beside it), blocks and events keep step as a column, no column is named like a DataFrame
# attribute (`stack` becomes `stack_`), nulls read as NaN (in lists too), provenance.json is a dict.
import json
import math

import pandas as pd

import normlab
from normlab.reader import safe_columns

LINES = [
    {"step": 1, "loss": 4.0, "lr": 0.001, "log_z_mean": 4.2,
     "layers": [{"resid": 1.0, "grad": {"w_qkv": 0.5}, "attn_head_max_logit": [0.1, None]},
                {"resid": 2.0, "grad": {"w_qkv": 0.25}, "attn_head_max_logit": [0.3, 0.4]}],
     "encoder_layers": [{"resid": 3.0, "grad": {"w_qkv": 0.125}}]},
    {"step": 2, "loss": None, "lr": 0.002},
]


def write_folder(path):
    path.mkdir()
    (path / "config.json").write_text(json.dumps({"source": "hand"}))
    (path / "metrics.jsonl").write_text("".join(json.dumps(line) + "\n" for line in LINES))
    (path / "events.jsonl").write_text(json.dumps({"step": 2, "kind": "change", "message": "m", "key": "k",
                                                   "value": 0.5}) + "\n")
    (path / "provenance.json").write_text(json.dumps({"normlab_version": "0.1.0"}))
    return normlab.load_run(path)


def test_steps_are_indexed_by_step_and_have_no_step_column(tmp_path):
    steps = write_folder(tmp_path / "run").steps
    assert steps.index.name == "step" and list(steps.index) == [1, 2]
    assert "step" not in steps.columns
    assert steps.loc[1, "log_z_mean"] == 4.2 and math.isnan(steps.loc[2, "loss"])
    assert list(steps.sort_values("step").index) == [1, 2]  # "step" is unambiguous: the index
    assert list(steps.reset_index().columns[:1]) == ["step"]


def test_blocks_rename_columns_named_like_dataframe_methods(tmp_path):
    blocks = write_folder(tmp_path / "run").blocks
    assert "stack" not in blocks.columns
    assert list(blocks.stack_) == ["decoder", "decoder", "encoder"]  # blocks.stack is DataFrame.stack
    assert not [c for c in blocks.columns if hasattr(pd.DataFrame, c)]
    assert list(blocks.groupby("step").size()) == [3]
    assert list(blocks["grad.w_qkv"]) == [0.5, 0.25, 0.125]
    heads = blocks.attn_head_max_logit.iloc[0]
    assert heads[0] == 0.1 and math.isnan(heads[1])


def test_events_and_provenance(tmp_path):
    run = write_folder(tmp_path / "run")
    assert list(run.events.columns) == ["step", "kind", "message", "key", "value"]
    assert run.events.value.iloc[0] == 0.5
    assert run.provenance == {"normlab_version": "0.1.0"}


def test_renaming_is_deterministic_and_never_collides():
    renames = safe_columns(["stack", "stack_", "T", "resid", "mean"], pd.DataFrame)
    assert renames == {"stack": "stack__", "T": "T_", "mean": "mean_"}
    assert safe_columns(["stack", "resid"], pd.DataFrame) == {"stack": "stack_"}


def test_an_empty_folder_gives_empty_frames_with_their_keys(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "config.json").write_text("{}")
    run = normlab.load_run(tmp_path / "run")
    assert run.steps.index.name == "step" and len(run.steps) == 0
    assert list(run.blocks.columns) == ["step", "stack_", "block"]
    assert run.provenance == {}

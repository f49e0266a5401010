# normlab-cli export --metrics --format parquet (NormLab's own writer: Debian has no Arrow) is read by
# pyarrow into the same table as the CSV export, over several row groups, with empty cells as nulls,
# non-finite values kept, typed key columns, and a step range applied.
import json
import math
import subprocess

import pandas as pd
import pyarrow.parquet as pq

from test_contract import cli  # noqa: F401 - the fixture that finds normlab-cli

BLOCKS, STEPS = 48, 1500  # 1500 x 49 rows: two row groups of 65536


def synthetic_run(folder, steps=STEPS, blocks=BLOCKS):
    """A run folder as a foreign writer might leave it: attention on some steps only, a NaN, an inf."""
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"source": "test", "model": {"layers": blocks}}))
    with open(folder / "metrics.jsonl", "w") as f:
        for step in range(1, steps + 1):
            line = {"step": step, "loss": 5.0 / step, "lr": 1e-3}
            line["layers"] = [{"resid": step + b / 100, "grad": {"w_qkv": b * 1e-3},  # every step: 1500 x 49 rows
                               **({"attn_entropy": 1.5, "attn_max_logit": 3.25} if step % 50 == 0 else {})}
                              for b in range(blocks)]
            if step == 700:
                line["loss"] = None  # a non-finite value: null in JSON, NaN in the table
                line["layers"][3]["resid"] = None
            f.write(json.dumps(line) + "\n")


def export(cli, folder, out, *extra):
    subprocess.run([cli, "export", "--run", str(folder), "--metrics", "--format", out.suffix[1:], "--out",
                    str(out), *extra], check=True, capture_output=True)


def test_parquet_holds_the_csv_table(tmp_path, cli):
    synthetic_run(tmp_path / "run")
    export(cli, tmp_path / "run", tmp_path / "m.parquet")
    export(cli, tmp_path / "run", tmp_path / "m.csv")
    meta = pq.ParquetFile(tmp_path / "m.parquet").metadata
    assert meta.num_row_groups == 2 and meta.num_rows == STEPS * (BLOCKS + 1)
    assert meta.created_by.startswith("NormLab ")
    table = pq.read_table(tmp_path / "m.parquet")
    assert str(table.schema.field("run").type) == "string" and str(table.schema.field("step").type) == "int64"
    assert str(table.schema.field("block").type) == "int32" and table.schema.field("loss").nullable
    parquet, csv = table.to_pandas(), pd.read_csv(tmp_path / "m.csv")
    pd.testing.assert_frame_equal(parquet.astype({"block": "int64"}), csv, check_dtype=False, rtol=1e-15)
    block_rows = parquet[parquet.block >= 0]
    assert block_rows.loss.isna().all() and parquet[parquet.block == -1].resid.isna().all()  # empty cells
    assert block_rows.attn_entropy.notna().sum() == (STEPS // 50) * BLOCKS  # sampled steps only
    assert math.isnan(parquet[(parquet.step == 700) & (parquet.block == 3)].resid.iloc[0])
    assert parquet[(parquet.step == 1490) & (parquet.block == 7)]["grad.w_qkv"].iloc[0] == 7e-3


def test_parquet_follows_a_step_range_and_an_empty_table_is_valid(tmp_path, cli):
    synthetic_run(tmp_path / "run", steps=30, blocks=2)
    export(cli, tmp_path / "run", tmp_path / "range.parquet", "--steps", "11:20")
    frame = pd.read_parquet(tmp_path / "range.parquet")
    assert sorted(set(frame.step)) == list(range(11, 21)) and len(frame) == 10 * 3
    export(cli, tmp_path / "run", tmp_path / "none.parquet", "--steps", "100:200")
    empty = pq.read_table(tmp_path / "none.parquet")
    assert empty.num_rows == 0 and "grad.w_qkv" in empty.column_names

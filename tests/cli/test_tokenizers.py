#!/usr/bin/env python3
"""data.tokenizer through normlab-cli (issue 36): a bpe:N run keeps tokenizer.model and its hash, the kept
file reproduces the run's tokens, the cache is filled once, a Hugging Face config's vocabulary must hold
the tokenizer's, a sweep's points tokenize alike, and every bad setting exits 2 naming what to change."""
import json
import math
import os
import sys
from pathlib import Path

import test_cli
from test_cli import TINY, CliTestCase, run


def losses(folder):
    return [m["loss"] for m in map(json.loads, (folder / "metrics.jsonl").read_text().splitlines())]


def fnv1a64(data):
    value = 14695981039346656037
    for byte in data:
        value = ((value ^ byte) * 1099511628211) % (1 << 64)
    return f"{value:016x}"


class Tokenizers(CliTestCase):
    def setUp(self):
        super().setUp()
        self.cache = self.tmp / "cache"
        self.saved = os.environ.get("XDG_CACHE_HOME")
        os.environ["XDG_CACHE_HOME"] = str(self.cache)  # the children cache here, not in the user's folder

    def tearDown(self):
        if self.saved is None:
            os.environ.pop("XDG_CACHE_HOME", None)
        else:
            os.environ["XDG_CACHE_HOME"] = self.saved
        super().tearDown()

    def train(self, name, *extra, steps="8"):
        out = self.tmp / name
        run("train", "--preset", "quickstart", *TINY, "--steps", steps, *extra, "--out", str(out), "--quiet",
            check_rc=0)
        return out

    def test_a_bpe_run_keeps_its_tokenizer_and_the_file_reproduces_it(self):
        first = self.train("bpe", "--set", "data.tokenizer=bpe:512")
        model = (first / "tokenizer.model").read_bytes()
        provenance = json.loads((first / "provenance.json").read_text())["tokenizer"]
        self.assertEqual(provenance, {"setting": "bpe:512", "vocab_size": 512, "file": "tokenizer.model",
                                      "fnv1a64": fnv1a64(model)})
        self.assertAlmostEqual(losses(first)[0], math.log(512), delta=0.5)  # a uniform guess over 512 pieces
        cached = list((self.cache / "normlab" / "tokenizers").glob("bpe-512-*.model"))
        self.assertEqual(len(cached), 1)
        self.assertEqual(cached[0].read_bytes(), model)
        # The kept file as the tokenizer: the same tokens, so the same losses step for step.
        again = self.train("file", "--set", f"data.tokenizer={first / 'tokenizer.model'}")
        self.assertEqual(losses(again), losses(first))
        # Bytes are unchanged by all this: no tokenizer.model, a 256-symbol vocabulary.
        plain = self.train("bytes")
        self.assertFalse((plain / "tokenizer.model").exists())
        self.assertEqual(json.loads((plain / "provenance.json").read_text())["tokenizer"],
                         {"setting": "bytes", "vocab_size": 256})
        self.assertAlmostEqual(losses(plain)[0], math.log(256), delta=0.5)

    def test_a_hugging_face_vocabulary_must_hold_the_tokenizers(self):
        config = self.tmp / "config.json"
        llama = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 32,
                 "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
                 "num_key_value_heads": 2, "max_position_embeddings": 64, "rms_norm_eps": 1e-6,
                 "rope_theta": 10000.0, "tie_word_embeddings": True, "vocab_size": 600}
        config.write_text(json.dumps(llama))
        out = self.tmp / "llama"
        run("train", "--hf-config", str(config), "--set", "data.tokenizer=bpe:512", "--set", "model.seq_len=16",
            "--steps", "3", "--out", str(out), "--quiet", check_rc=0)
        self.assertEqual(json.loads((out / "config.json").read_text())["model"]["vocab_size"], 600)
        self.assertTrue((out / "tokenizer.model").exists())
        llama["vocab_size"] = 300
        config.write_text(json.dumps(llama))
        self.expect_bad_input(["train", "--hf-config", str(config), "--set", "data.tokenizer=bpe:512", "--set",
                               "model.seq_len=16", "--steps", "3", "--out", str(self.tmp / "small")],
                              "model.vocab_size = 300 is smaller than the text task's 512 tokens",
                              out=self.tmp / "small")

    def test_a_sweeps_points_share_one_trained_tokenizer(self):
        sweep = self.tmp / "sweep"
        run("sweep", "plan", "--preset", "quickstart", *TINY, "--set", "data.tokenizer=bpe:400", "--axis",
            "train.lr=1e-3,3e-3", "--steps", "4", "--out", str(sweep), check_rc=0)
        run("sweep", "run", str(sweep), "--quiet", check_rc=0)
        models = {p.read_bytes() for p in sweep.glob("**/tokenizer.model")}
        self.assertEqual(len(list(sweep.glob("**/tokenizer.model"))), 2)
        self.assertEqual(len(models), 1)
        self.assertEqual(len(list((self.cache / "normlab" / "tokenizers").glob("*.model"))), 1)

    def test_eval_text_scores_a_text_with_the_runs_tokenizer(self):
        text = self.tmp / "text.txt"
        corpus = (Path(__file__).resolve().parents[2] / "resources" / "corpus.txt").read_bytes()
        text.write_bytes(corpus[:corpus.index(b"\n", 2000) + 1] + "Naïve café.\n".encode())
        size = len(text.read_bytes())
        bpe = self.train("bpe", "--set", "data.tokenizer=bpe:512", "--save-checkpoint")
        scored = json.loads(run("eval", "--checkpoint", str(bpe / "model.safetensors"), "--text", str(text),
                                check_rc=0).stdout)
        self.assertIn("tokenizer.model", scored["tokenizer"])
        self.assertEqual(scored["bytes"], size)
        self.assertLess(scored["tokens"], size / 1.8)  # 512 BPE pieces pack the prose about 2 bytes each
        self.assertAlmostEqual(scored["bits_per_byte"], scored["loss"] * scored["tokens"] / math.log(2) / size,
                               places=9)
        # A byte-level run: one token per byte, and the same loss as the same windows given as ids.
        plain = self.train("bytes", "--save-checkpoint")
        by_text = json.loads(run("eval", "--checkpoint", str(plain / "model.safetensors"), "--text", str(text),
                                 check_rc=0).stdout)
        self.assertEqual((by_text["tokenizer"], by_text["tokens"]), ("bytes", size - 1))
        data, seq = text.read_bytes(), 16
        windows = [data[i:i + seq + 1] for i in range(0, len(data) - 1, seq)]
        ids = self.tmp / "ids.txt"
        ids.write_text("".join(" ".join(str(b) for b in w) + "\n" for w in windows))
        by_ids = json.loads(run("eval", "--checkpoint", str(plain / "model.safetensors"), "--tokens", str(ids),
                                check_rc=0).stdout)
        self.assertEqual(by_ids["tokens"], by_text["tokens"])
        self.assertAlmostEqual(by_ids["loss"], by_text["loss"], places=12)
        # What eval refuses: a lost tokenizer, a BPE vocabulary to learn from the text scored, mixed inputs.
        (bpe / "tokenizer.model").rename(self.tmp / "moved.model")
        checkpoint = str(bpe / "model.safetensors")
        self.expect_bad_input(["eval", "--checkpoint", checkpoint, "--text", str(text)],
                              "trained with data.tokenizer = bpe:512", "--tokenizer FILE.model")
        again = json.loads(run("eval", "--checkpoint", checkpoint, "--text", str(text), "--tokenizer",
                               str(self.tmp / "moved.model"), check_rc=0).stdout)
        self.assertEqual(again["loss"], scored["loss"])
        self.expect_bad_input(["eval", "--checkpoint", checkpoint, "--text", str(text), "--tokenizer", "bpe:512"],
                              "not from the text being scored")
        self.expect_bad_input(["eval", "--checkpoint", checkpoint, "--tokens", str(ids), "--text", str(text)],
                              "one of --tokens FILE and --text FILE")
        self.expect_bad_input(["eval", "--checkpoint", checkpoint, "--tokens", str(ids), "--tokenizer", "bytes"],
                              "--tokenizer tokenizes --text")
        small = self.train("small", "--set", "data.tokenizer=bpe:330", "--save-checkpoint", steps="2")
        self.expect_bad_input(["eval", "--checkpoint", str(small / "model.safetensors"), "--text", str(text),
                               "--tokenizer", str(self.tmp / "moved.model")], "more than the model's vocabulary of 330")

    def test_bad_settings_exit_2_naming_what_to_change(self):
        out = self.tmp / "bad"
        base = ["train", "--preset", "quickstart", *TINY, "--steps", "2", "--out", str(out)]
        self.expect_bad_input([*base, "--set", "data.tokenizer=bpe:x"], "data.tokenizer", "bpe:N", out=out)
        self.expect_bad_input([*base, "--set", "data.tokenizer=bpe:100"], "260 to", out=out)
        self.expect_bad_input([*base, "--set", "data.tokenizer=bpe:60000"], "holds at most", "or fewer", out=out)
        self.expect_bad_input([*base, "--set", "data.tokenizer=bpe:270"], "needs at least", out=out)
        self.expect_bad_input([*base, "--set", f"data.tokenizer={self.tmp / 'missing.model'}"], "does not exist",
                              out=out)
        json_file = self.tmp / "tokenizer.json"
        json_file.write_text('{"version": "1.0", "model": {"type": "BPE"}}')
        self.expect_bad_input([*base, "--set", f"data.tokenizer={json_file}"], "tokenizer.json",
                              "SentencePiece .model", out=out)
        junk = self.tmp / "junk.model"
        junk.write_bytes(bytes(range(256)) * 4)
        self.expect_bad_input([*base, "--set", f"data.tokenizer={junk}"], "is not a SentencePiece model", out=out)


if __name__ == "__main__":
    sys.exit(test_cli.main(__doc__))

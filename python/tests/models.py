# Tiny models for the bridge's tests, built from configs (nothing downloaded): Hugging Face GPT-2 and
# Llama, a nanoGPT-shaped GPT written here, and a plain module with names of its own that reports its
# attention through normlab.record_attention. Plus a training loop that feeds them all alike.
import math
import os

import torch
import torch.nn.functional as F
from torch import nn

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

VOCAB, SEQ, WIDTH, HEADS, LAYERS = 64, 16, 32, 4, 3
# AdamW's eps in the tests: large enough that some but not all coordinates have sqrt(v) below it, so the
# bridge's adam_eps_fraction is checked away from 0 and 1
ADAM_EPS = 1e-4
# Where the tests' models and batches live: the CPU, or NORMLAB_TEST_DEVICE=cuda on a GPU machine
DEVICE = torch.device(os.environ.get("NORMLAB_TEST_DEVICE", "cpu"))


def hf_gpt2(attn="sdpa"):
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(n_layer=LAYERS, n_embd=WIDTH, n_head=HEADS, vocab_size=VOCAB, n_positions=SEQ,
                        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=0, eos_token_id=0)
    model = GPT2LMHeadModel(config)
    model.set_attn_implementation(attn)
    return model


def hf_llama(attn="sdpa"):
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(num_hidden_layers=LAYERS, hidden_size=WIDTH, num_attention_heads=HEADS,
                         num_key_value_heads=2, intermediate_size=64, vocab_size=VOCAB,
                         max_position_embeddings=SEQ, bos_token_id=0, eos_token_id=0, pad_token_id=0)
    model = LlamaForCausalLM(config)
    model.set_attn_implementation(attn)
    return model


class _NanoAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.n_head = HEADS
        self.c_attn = nn.Linear(WIDTH, 3 * WIDTH)
        self.c_proj = nn.Linear(WIDTH, WIDTH)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.c_attn(x).split(WIDTH, dim=2)
        q, k, v = (z.view(b, t, HEADS, c // HEADS).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.c_proj(y.transpose(1, 2).contiguous().view(b, t, c))


class _NanoBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1 = nn.LayerNorm(WIDTH)
        self.attn = _NanoAttention()
        self.ln_2 = nn.LayerNorm(WIDTH)
        self.mlp = nn.ModuleDict(dict(c_fc=nn.Linear(WIDTH, 4 * WIDTH), c_proj=nn.Linear(4 * WIDTH, WIDTH)))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp.c_proj(F.gelu(self.mlp.c_fc(self.ln_2(x))))


class NanoGPT(nn.Module):
    """The shape of nanoGPT's model.py (transformer.h blocks, c_attn, (logits, loss) returned)."""

    def __init__(self):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(VOCAB, WIDTH), wpe=nn.Embedding(SEQ, WIDTH),
            h=nn.ModuleList([_NanoBlock() for _ in range(LAYERS)]), ln_f=nn.LayerNorm(WIDTH)))
        self.lm_head = nn.Linear(WIDTH, VOCAB, bias=False)

    def forward(self, idx, targets=None):
        x = self.transformer.wte(idx) + self.transformer.wpe(torch.arange(idx.shape[1], device=idx.device))
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        loss = None if targets is None else F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))
        return logits, loss


class _PlainLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.pre_attn = nn.RMSNorm(WIDTH)
        self.qkv = nn.Linear(WIDTH, 3 * WIDTH, bias=False)
        self.proj = nn.Linear(WIDTH, WIDTH, bias=False)
        self.pre_ffn = nn.RMSNorm(WIDTH)
        self.up = nn.Linear(WIDTH, 2 * WIDTH, bias=False)
        self.down = nn.Linear(2 * WIDTH, WIDTH, bias=False)

    def forward(self, x):
        import normlab

        b, t, c = x.shape
        q, k, v = (z.view(b, t, HEADS, c // HEADS).transpose(1, 2) for z in self.qkv(self.pre_attn(x)).chunk(3, -1))
        normlab.record_attention(q, k)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
        return x + self.down(F.relu(self.up(self.pre_ffn(x))))


class PlainModel(nn.Module):
    """A user's own model: no known names, so watch() needs roles=; returns the logits only."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.stack = nn.ModuleList([_PlainLayer() for _ in range(LAYERS)])
        self.out = nn.Linear(WIDTH, VOCAB, bias=False)

    def forward(self, idx):
        x = self.embed(idx)
        for layer in self.stack:
            x = layer(x)
        return self.out(x)


class _TitanAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.wq, self.wk, self.wv, self.wo = (nn.Linear(WIDTH, WIDTH, bias=False) for _ in range(4))

    def forward(self, x):
        import normlab

        b, t, c = x.shape
        q, k, v = (w(x).view(b, t, HEADS, c // HEADS).transpose(1, 2) for w in (self.wq, self.wk, self.wv))
        normlab.record_attention(q, k)  # what a torchtitan user adds to see attention
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.wo(y.transpose(1, 2).reshape(b, t, c))


class _TitanFeedForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.w1, self.w3 = nn.Linear(WIDTH, 2 * WIDTH, bias=False), nn.Linear(WIDTH, 2 * WIDTH, bias=False)
        self.w2 = nn.Linear(2 * WIDTH, WIDTH, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class _TitanBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention_norm, self.attention = nn.RMSNorm(WIDTH), _TitanAttention()
        self.ffn_norm, self.feed_forward = nn.RMSNorm(WIDTH), _TitanFeedForward()

    def forward(self, x):
        h = x + self.attention(self.attention_norm(x))
        return h + self.feed_forward(self.ffn_norm(h))


class TitanLlama(nn.Module):
    """The shape of torchtitan's Llama 3 (layers in a ModuleDict, wq/wk/wv/wo, w1/w2/w3); no RoPE."""

    def __init__(self):
        super().__init__()
        self.tok_embeddings = nn.Embedding(VOCAB, WIDTH)
        self.layers = nn.ModuleDict({str(i): _TitanBlock() for i in range(LAYERS)})
        self.norm, self.output = nn.RMSNorm(WIDTH), nn.Linear(WIDTH, VOCAB, bias=False)

    def forward(self, idx):
        x = self.tok_embeddings(idx)
        for layer in self.layers.values():
            x = layer(x)
        return self.output(self.norm(x))


PLAIN_ROLES = {"w_qkv": ["qkv.weight"], "w_o": ["proj.weight"], "w_1": ["up.weight"], "w_2": ["down.weight"],
               "norm1": ["pre_attn.weight"], "norm2": ["pre_ffn.weight"], "attn_sum_input": "pre_ffn"}

BUILDERS = {"gpt2": hf_gpt2, "llama": hf_llama, "nanogpt": NanoGPT, "plain": PlainModel, "titan": TitanLlama}


def batch(step, size=4, seed=0):
    generator = torch.Generator().manual_seed(seed * 100003 + step)
    return torch.randint(0, VOCAB, (size, SEQ), generator=generator).to(DEVICE)


def loss_of(kind, model, tokens):
    """The model's loss as its own API returns it (and, for the plain model, computed by the user)."""
    if kind in ("gpt2", "llama"):
        return model(input_ids=tokens, labels=tokens).loss
    if kind == "nanogpt":
        return model(tokens[:, :-1], tokens[:, 1:])[1]
    logits = model(tokens[:, :-1])  # plain and titan: the logits only
    return F.cross_entropy(logits.reshape(-1, VOCAB), tokens[:, 1:].reshape(-1))


def make(kind, seed=0):
    torch.manual_seed(seed)
    model = BUILDERS[kind]().to(DEVICE)
    return model, torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.1, eps=ADAM_EPS)


def watch_options(kind):
    return {"roles": PLAIN_ROLES} if kind == "plain" else {}


def log_loss(kind):
    """The plain and torchtitan-shaped models return logits only: their user passes the loss to w.log."""
    return kind in ("plain", "titan")


def expected_entropy(p):
    """Mean row entropy (nats) of attention probabilities [H, T, T]."""
    return float(-(p * torch.where(p > 0, p.log(), torch.zeros_like(p))).sum(-1).mean())


def assert_close(actual, expected, rel=1e-6, what=""):
    assert math.isclose(actual, expected, rel_tol=rel, abs_tol=1e-12), f"{what}: {actual} != {expected}"

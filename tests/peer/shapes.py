# The benchmark shapes shared by NormLab's bench runs and the PyTorch peer (tests/peer/), so both
# always build the same models: name -> (d_model, layers, heads, seq_len, batch); d_ff = 4 d, vocab 65.
SHAPES = {
    "tiny": (64, 4, 4, 32, 16),
    "small": (128, 6, 4, 64, 32),
    "medium": (256, 8, 8, 128, 16),
    "deep": (64, 48, 4, 32, 16),
    "large": (768, 12, 12, 512, 8),
    # GPT-2 small's width, depth, heads and context (its 50257-token vocabulary aside), for a GPU
    "gpt2": (768, 12, 12, 1024, 16),
}

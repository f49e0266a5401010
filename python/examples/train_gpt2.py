# A user's own training, watched by NormLab: a byte-level Hugging Face GPT-2 on a text file, in one
# process or under torchrun (DistributedDataParallel over gloo on CPU, NCCL on GPUs). Two lines are
# NormLab's: normlab.watch(...) before the loop and w.close() after it (here, the `with` block).
#   torchrun --standalone --nproc-per-node=2 python/examples/train_gpt2.py --out runs/gpt2-ddp
# Without --out it writes where NORMLAB_RUN_DIR points: a point of `normlab-cli sweep` over this script
# (python/examples/sweep_gpt2.json sweeps its learning rate and norm type).
import argparse
import os

import torch
import torch.distributed as dist
from transformers import GPT2Config, GPT2LMHeadModel

import normlab

HERE = os.path.dirname(os.path.abspath(__file__))
parser = argparse.ArgumentParser()
parser.add_argument("--out", help="the run folder (default: $NORMLAB_RUN_DIR, set by normlab-cli sweep)")
parser.add_argument("--text", default=os.path.join(HERE, "..", "..", "resources", "corpus.txt"))
parser.add_argument("--steps", type=int, default=300)
parser.add_argument("--layers", type=int, default=4)
parser.add_argument("--d-model", type=int, default=64)
parser.add_argument("--heads", type=int, default=4)
parser.add_argument("--seq", type=int, default=64)
parser.add_argument("--batch", type=int, default=16, help="sequences per step, over all processes")
parser.add_argument("--lr", type=float, default=3e-3)
parser.add_argument("--warmup", type=int, default=50)
parser.add_argument("--norm", choices=["layernorm", "rmsnorm"], default="layernorm",
                    help="rmsnorm: every LayerNorm replaced by torch.nn.RMSNorm (same eps, gain 1)")
parser.add_argument("--seed", type=int, default=0, help="the model's initialisation and the batches")
args = parser.parse_args()

distributed = "WORLD_SIZE" in os.environ
if distributed:
    dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
rank, world = (dist.get_rank(), dist.get_world_size()) if distributed else (0, 1)
device = torch.device(f"cuda:{int(os.environ.get('LOCAL_RANK', 0))}" if torch.cuda.is_available() else "cpu")

data = torch.tensor(list(open(args.text, "rb").read()), dtype=torch.long)
torch.manual_seed(args.seed)
config = GPT2Config(vocab_size=256, n_positions=args.seq, n_embd=args.d_model, n_layer=args.layers,
                    n_head=args.heads, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                    bos_token_id=0, eos_token_id=0)
model = GPT2LMHeadModel(config)
if args.norm == "rmsnorm":  # the same model with RMSNorm (no centring, no bias) in every norm's place
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if isinstance(child, torch.nn.LayerNorm):
                setattr(parent, name, torch.nn.RMSNorm(child.normalized_shape, eps=child.eps))
model = model.to(device)
trained = torch.nn.parallel.DistributedDataParallel(model) if distributed else model
optimizer = torch.optim.AdamW(trained.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.0)
schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / max(1, args.warmup)))
generator = torch.Generator().manual_seed(1 + rank + 1000 * args.seed)

with normlab.watch(trained, optimizer, out=args.out, overwrite=True, config=vars(args)) as w:
    for step in range(args.steps):
        starts = torch.randint(0, len(data) - args.seq - 1, (args.batch // world,), generator=generator)
        tokens = torch.stack([data[s:s + args.seq] for s in starts]).to(device)
        loss = trained(input_ids=tokens, labels=tokens).loss
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(trained.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        schedule.step()
        w.log(grad_norm=grad_norm)  # optional: the pre-clip total, so block norms are pre-clip too
if distributed:
    dist.barrier()  # no process tears the group down while another still uses it
    dist.destroy_process_group()
    # torch 2.15's gloo threads can abort the interpreter's shutdown after all this ("terminate called
    # without an active exception", measured: 1 run in 20 on a loaded 2-core machine); the run folder
    # is closed and the group destroyed, so leave without it.
    os._exit(0)

# Finds what NormLab needs in a user's model: the wrapper-free module, its blocks, each weight's role
# (w_qkv, w_o, w_1, w_2, norm1, norm2) from one table of known families, the module whose input is the
# attention residual sum, the recognised norms, and how attention is sampled. Others take blocks=, roles=.
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import torch
from torch import nn

from . import norms

# The engine's gradient roles, in the order NormLab writes them (engine/io/record_fields.h).
ROLES = ("w_qkv", "w_o", "w_1", "w_2", "norm1", "norm2", "norm1_out", "norm2_out")
NORM_ROLES = ("norm1", "norm2", "norm1_out", "norm2_out")  # gains whose module's per-token scale is measured
Norm = Tuple[nn.Module, norms.NormKind]


@dataclass(frozen=True)
class Family:
    name: str
    roles: Dict[str, Sequence[str]]  # role -> parameter names inside a block
    attn_sum_input: Optional[str]  # the sub-module whose input is the attention residual sum (Pre-LN)
    attention: Optional[str]  # "qkv_split": a fused c_attn projection inside block.attn; else None


# One table for every family the bridge recognises; a block matches a family when it has every name.
FAMILIES = (
    Family("gpt2", {"w_qkv": ["attn.c_attn.weight"], "w_o": ["attn.c_proj.weight"],
                    "w_1": ["mlp.c_fc.weight"], "w_2": ["mlp.c_proj.weight"],
                    "norm1": ["ln_1.weight"], "norm2": ["ln_2.weight"]}, "ln_2", "qkv_split"),
    Family("llama", {"w_qkv": ["self_attn.q_proj.weight", "self_attn.k_proj.weight", "self_attn.v_proj.weight"],
                     "w_o": ["self_attn.o_proj.weight"],
                     "w_1": ["mlp.gate_proj.weight", "mlp.up_proj.weight"], "w_2": ["mlp.down_proj.weight"],
                     "norm1": ["input_layernorm.weight"], "norm2": ["post_attention_layernorm.weight"]},
           "post_attention_layernorm", None),
    Family("torchtitan", {"w_qkv": ["attention.wq.weight", "attention.wk.weight", "attention.wv.weight"],
                          "w_o": ["attention.wo.weight"],
                          "w_1": ["feed_forward.w1.weight", "feed_forward.w3.weight"],
                          "w_2": ["feed_forward.w2.weight"],
                          "norm1": ["attention_norm.weight"], "norm2": ["ffn_norm.weight"]}, "ffn_norm", None),
)


@dataclass
class Layout:
    root: nn.Module  # the model without DDP / torch.compile wrappers
    block_names: List[str]
    blocks: List[nn.Module]
    family: str  # a FAMILIES name, or "user"
    roles: List[Dict[str, List[nn.Parameter]]]  # per block: role -> parameters
    attn_sum_inputs: List[Optional[nn.Module]]  # per block
    hf_attention: bool  # a Hugging Face model: sample attention through its AttentionInterface
    qkv_split: List[Optional[nn.Module]] = field(default_factory=list)  # per block: the c_attn to hook
    vocab_size: Optional[int] = None
    heads: Optional[int] = None  # attention heads (queries), when the model says
    norms: List[Dict[str, Norm]] = field(default_factory=list)  # per block: NORM_ROLES entry -> its norm
    final_norm: Optional[Norm] = None

    @property
    def norm_type(self) -> Optional[str]:
        """The engine's model.norm_type of the blocks' norms ("layernorm", "rmsnorm"), when every norm
        role's module is recognised and all are of one kind; else None."""
        kinds = {kind.kind for block in self.norms for _, kind in block.values()}
        complete = all(len(block) == sum(r in roles for r in NORM_ROLES)
                       for block, roles in zip(self.norms, self.roles))
        return kinds.pop() if len(kinds) == 1 and complete else None

    def describe(self) -> str:
        lines = [f"normlab: {len(self.blocks)} blocks ({self.family}) at "
                 f"{self.block_names[0]} .. {self.block_names[-1]}"]
        names = {id(p): n for n, p in self.blocks[0].named_parameters()}
        for role, params in self.roles[0].items():
            lines.append(f"normlab:   {role:7s} <- " + ", ".join(names.get(id(p), "?") for p in params))
        attention = "Hugging Face attention interface" if self.hf_attention else (
            "fused qkv projection" if any(self.qkv_split) else "normlab.record_attention calls (if any)")
        lines.append(f"normlab:   attention sampled from: {attention}")
        found = [f"{role} ({kind.kind})" for role, (_, kind) in self.norms[0].items()]
        if self.final_norm is not None:
            found.append(f"final ({self.final_norm[1].kind})")
        lines.append("normlab:   norm scales of: " + (", ".join(found) or "no recognised norm"))
        return "\n".join(lines)


def unwrap(model: nn.Module) -> nn.Module:
    """The module under DistributedDataParallel / DataParallel and torch.compile wrappers."""
    while True:
        if isinstance(model, (nn.parallel.DistributedDataParallel, nn.DataParallel)):
            model = model.module
        elif hasattr(model, "_orig_mod") and isinstance(model._orig_mod, nn.Module):
            model = model._orig_mod
        else:
            return model


def _candidate_lists(root: nn.Module):
    for name, module in root.named_modules():
        if isinstance(module, nn.ModuleList):
            children = list(module.named_children())
        elif isinstance(module, nn.ModuleDict):
            children = list(module.items())
        else:
            continue
        if children and len({type(child) for _, child in children}) == 1:
            prefix = f"{name}." if name else ""
            yield [prefix + child_name for child_name, _ in children], [child for _, child in children]


def find_blocks(root: nn.Module, blocks=None):
    """(names, modules) of the model's blocks: given, Hugging Face's _no_split_modules, or the longest
    ModuleList / ModuleDict of same-class children."""
    named = dict(root.named_modules())
    if blocks is not None:
        if isinstance(blocks, str):
            if blocks not in named:
                raise ValueError(f"normlab.watch: blocks={blocks!r} names no sub-module of the model")
            container = named[blocks]
            items = container.items() if isinstance(container, nn.ModuleDict) else container.named_children()
            pairs = [(f"{blocks}.{n}", m) for n, m in items]
        else:
            by_id = {id(m): n for n, m in named.items()}
            pairs = [(by_id.get(id(m), "?"), m) for m in blocks]
        if not pairs:
            raise ValueError("normlab.watch: blocks= holds no module")
        return [n for n, _ in pairs], [m for _, m in pairs]
    split = getattr(root, "_no_split_modules", None) or []
    if split:
        pairs = [(n, m) for n, m in named.items() if type(m).__name__ in split]
        if pairs:
            return [n for n, _ in pairs], [m for _, m in pairs]
    best = max(_candidate_lists(root), key=lambda found: len(found[1]), default=None)
    if best is None:
        raise ValueError("normlab.watch: found no list of blocks in the model; pass blocks= (a module path "
                         "such as 'transformer.h', or a list of modules)")
    return best


def _params_by_name(block: nn.Module, names: Sequence[str], where: str):
    params = dict(block.named_parameters())
    missing = [n for n in names if n not in params]
    if missing:
        raise ValueError(f"normlab.watch: {where} has no parameter {missing[0]!r}; its parameters are "
                         + ", ".join(list(params)[:20]))
    return [params[n] for n in names]


def _match_family(block: nn.Module) -> Optional[Family]:
    names = {n for n, _ in block.named_parameters()}
    for family in FAMILIES:
        if all(n in names for ns in family.roles.values() for n in ns):
            return family
    return None


def _block_norms(block: nn.Module, roles: Dict[str, List[nn.Parameter]]) -> Dict[str, Norm]:
    """Per norm role of the block, the module owning its gain, when the bridge recognises it."""
    found = {}
    for role in NORM_ROLES:
        module = norms.owner_of(block, roles[role][0]) if role in roles else None
        kind = norms.recognise(module) if module is not None else None
        if kind is not None:
            found[role] = (module, kind)
    return found


def _heads(root: nn.Module, block: nn.Module) -> Optional[int]:
    config = getattr(root, "config", None)
    heads = getattr(config, "num_attention_heads", None) or getattr(config, "n_head", None)
    return heads or getattr(getattr(block, "attn", None), "n_head", None)


def build_layout(model: nn.Module, blocks=None, roles=None) -> Layout:
    root = unwrap(model)
    names, modules = find_blocks(root, blocks)
    family = None if roles is not None else _match_family(modules[0])
    role_table = dict(roles) if roles is not None else (dict(family.roles) if family else {})
    attn_sum = role_table.pop("attn_sum_input", None) if roles is not None else (
        family.attn_sum_input if family else None)
    unknown = [r for r in role_table if r not in ROLES]
    if unknown:
        raise ValueError(f"normlab.watch: roles= has {unknown[0]!r}; roles are " + ", ".join(ROLES)
                         + " (and attn_sum_input)")
    block_roles, sum_inputs, qkv = [], [], []
    for name, block in zip(names, modules):
        block_roles.append({role: _params_by_name(block, [n] if isinstance(n, str) else list(n), name)
                            for role, n in ((r, role_table[r]) for r in ROLES if r in role_table)})
        sub = dict(block.named_modules())
        if attn_sum is not None and attn_sum not in sub:
            raise ValueError(f"normlab.watch: {name} has no sub-module {attn_sum!r} (attn_sum_input)")
        sum_inputs.append(sub[attn_sum] if attn_sum else None)
        attn = sub.get("attn")
        split = family is not None and family.attention == "qkv_split" and attn is not None and hasattr(
            attn, "c_attn") and hasattr(attn, "n_head")
        qkv.append(attn.c_attn if split else None)
    config = getattr(root, "config", None)
    hf = config is not None and hasattr(config, "_attn_implementation") and hasattr(root, "set_attn_implementation")
    vocab = getattr(config, "vocab_size", None)
    if vocab is None:
        head = getattr(root, "lm_head", None)
        vocab = getattr(head, "out_features", None)
    final = norms.final_norm(root, modules)
    return Layout(root=root, block_names=list(names), blocks=list(modules),
                  family=family.name if family else ("user" if roles is not None else "unknown"),
                  roles=block_roles, attn_sum_inputs=sum_inputs, hf_attention=hf,
                  qkv_split=[None] * len(qkv) if hf else qkv, vocab_size=vocab, heads=_heads(root, modules[0]),
                  norms=[_block_norms(b, r) for b, r in zip(modules, block_roles)],
                  final_norm=(final, norms.recognise(final)) if final is not None else None)


def parallelism(model: nn.Module, root: nn.Module, world_size: int) -> str:
    """single | ddp | fsdp2 | data (several processes, gradients assumed already averaged); raises
    ValueError for tensor or pipeline parallelism, which the bridge would log wrongly."""
    if type(model).__name__ in ("PipelineStage", "_PipelineStageBase"):
        raise ValueError("normlab.watch: pipeline parallelism is not supported (each stage sees only its "
                         "own blocks); watch a data-parallel (DDP or FSDP2) run instead")
    if isinstance(model, nn.parallel.DistributedDataParallel):
        return "ddp"
    dtensors = [p for p in root.parameters() if is_dtensor(p)]
    if dtensors:
        from torch.distributed.fsdp import FSDPModule

        if not any(isinstance(m, FSDPModule) for m in root.modules()):
            raise ValueError("normlab.watch: the model's parameters are DTensors but no module is sharded "
                             "with fully_shard: tensor parallelism is not supported")
        for p in dtensors:
            shards = [pl for pl in p.placements if pl.is_shard()]
            if len(shards) > 1 or any(pl.dim != 0 for pl in shards) or not all(
                    pl.is_shard() or pl.is_replicate() for pl in p.placements):
                raise ValueError(f"normlab.watch: a parameter is placed as {p.placements}; only FSDP2 "
                                 "(Shard(0), optionally with Replicate for HSDP) is supported, not tensor "
                                 "parallelism")
        return "fsdp2"
    return "single" if world_size == 1 else "data"


def is_dtensor(tensor) -> bool:
    return type(tensor).__name__ == "DTensor"


def replicas(param: torch.Tensor, world_size: int) -> int:
    """How many ranks hold the same values of this parameter (and of its gradient): the whole world for
    a plain tensor, world / (ranks it is sharded over) for a DTensor."""
    if not is_dtensor(param):
        return world_size
    shards = 1
    for dim, placement in enumerate(param.placements):
        if placement.is_shard():
            shards *= param.device_mesh.size(dim)
    return max(1, world_size // shards)

# The engine's rules for loss spikes and divergence, so a bridge run's events mean what a NormLab run's
# do: a spike is a loss whose z-score over a full trailing window exceeds spike_z (engine/train/
# loss_spikes.cpp); a run diverges on a non-finite value or a loss above diverge_loss x max(ln V, first).
from __future__ import annotations

import math
from collections import deque
from typing import Optional


class LossSpikeDetector:
    def __init__(self, window: int = 50, threshold: float = 6.0):
        self.threshold = threshold
        self.history = deque(maxlen=window)

    def observe(self, loss: float) -> float:
        """The loss's z-score when it is a spike, else 0. Non-finite losses never enter the window."""
        z = 0.0
        if len(self.history) == self.history.maxlen:
            mean = sum(self.history) / len(self.history)
            spread = math.sqrt(sum((x - mean) ** 2 for x in self.history) / len(self.history))
            score = (loss - mean) / max(spread, 1e-6 * max(1.0, abs(mean)))
            if score > self.threshold:
                z = score
            self.history.popleft()
        if math.isfinite(loss):
            self.history.append(loss)
        return z


class DivergenceRule:
    """diverge_loss x max(ln vocabulary, the first loss) bounds the loss (0 turns the bound off)."""

    def __init__(self, diverge_loss: float = 3.0, vocab_size: Optional[int] = None):
        self.factor = diverge_loss
        self.vocab_size = vocab_size
        self.reference = None

    def reason(self, loss: float) -> Optional[str]:
        if not math.isfinite(loss):
            return "non-finite loss"
        if self.reference is None:
            self.reference = max(math.log(self.vocab_size), loss) if self.vocab_size else loss
        bound = self.factor * self.reference
        if bound <= 0 or loss <= bound:
            return None
        return (f"loss {loss:g} above {bound:g} (diverge_loss {self.factor:g} x {self.reference:g}, the larger "
                "of ln(vocabulary) and the first step's loss)")

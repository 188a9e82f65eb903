"""What the stages of a pipeline agree on before a batch sends anything: which call each made
(``train_batch`` or ``eval_batch``), its settings, how many batches it has run, and whether its
own checks (the data, the optimizer) passed. One small all-reduce over the pipe group (each
stage fills its row of a table of zeros, the sum is every stage's row) lets every stage raise the
same error where they differ or one refused, instead of a stage waiting for messages that never
come or, worse, two different calls exchanging messages of the same shapes and finishing with
wrong weights.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

import numpy as np

import pycoll.distributed as dist

CALLS = ("train_batch", "eval_batch")
# what each stage says about its call; all but the two "refused" flags must be alike
FIELDS = ("call", "batch", "accumulate_steps", "micro_batch_size", "compute_loss", "return_micro_batch_loss",
          "scaler")
_DATA, _OPTIMIZER = len(FIELDS), len(FIELDS) + 1


def agree(group: dist.Group, stage: int, num_stages: int, call: Dict[str, int],
          refusal: Optional[Exception] = None, optimizer_ok: bool = True) -> None:
    """Check ``call`` (a value per name of ``FIELDS``) against every other stage's; raise on
    every stage alike: this stage's own ``refusal`` where it has one, else an error naming what
    each stage called, the stages that refused their data, or those whose optimizer did not go
    through ``fleet.distributed_optimizer``."""
    xp = group.array_module
    table = np.zeros((num_stages, len(FIELDS) + 2), np.int64)
    table[stage, :len(FIELDS)] = [call[name] for name in FIELDS]
    table[stage, _DATA] = refusal is not None
    table[stage, _OPTIMIZER] = not optimizer_ok
    table = xp.asarray(table)
    dist.all_reduce(table, group=group)
    rows: List[List[int]] = [[int(v) for v in row] for row in table.tolist()]
    fn = CALLS[call["call"]]
    if any(row[:len(FIELDS)] != rows[0][:len(FIELDS)] for row in rows):
        raise ValueError(f"PipelineParallel.{fn}: the pipeline's stages made different calls for this batch: "
                         f"{_describe(rows)}; every stage must call the same one, with the same settings, "
                         f"batch after batch (nothing was sent or changed)")
    if refusal is not None:
        raise refusal
    refused = [s for s, row in enumerate(rows) if row[_DATA]]
    if refused:
        raise ValueError(f"PipelineParallel.{fn}: stage(s) {refused} refused this batch (their error says "
                         f"why); no stage ran it")
    unwrapped = [s for s, row in enumerate(rows) if row[_OPTIMIZER]]
    if unwrapped:
        raise TypeError(f"PipelineParallel.train_batch: the optimizer of stage(s) {unwrapped} did not go through "
                        f"fleet.distributed_optimizer (whose clip spans every stage); pass "
                        f"optimizer = fleet.distributed_optimizer(optimizer) (paddle refuses it too: "
                        f"'optimizer should be HybridParallelOptimizer subclass')")


def _describe(rows: List[List[int]]) -> str:
    """Each stage's call, with the settings in which the stages differ."""
    differing = [i for i in range(1, len(FIELDS)) if len({row[i] for row in rows}) > 1]
    parts = []
    for stage, row in enumerate(rows):
        settings = ", ".join(f"{FIELDS[i]}={_show(FIELDS[i], row[i])}" for i in differing)
        parts.append(f"stage {stage} called {CALLS[row[0]]}" + (f" ({settings})" if settings else ""))
    return ", ".join(parts)


def _show(name: str, value: int) -> Any:
    if name == "batch":
        return f"#{value}"
    return bool(value) if name in ("compute_loss", "return_micro_batch_loss", "scaler") else value

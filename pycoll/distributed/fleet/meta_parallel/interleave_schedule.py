"""The order of an interleaved pipeline's work, and the program each stage runs it by.

With ``num_stages`` P stages of ``num_chunks`` V chunks each, virtual stage ``k = c * P + s`` is
chunk ``c`` of stage ``s``: micro-batch ``m`` goes forward through virtual stages 0..PV-1 (from
stage P-1 back round to stage 0 between chunks) and backward through them in reverse. Each stage
runs its forwards ("F") and backwards ("B") in paddle's order (``interleaved_order``: its
``PipelineParallelWithInterleave``, Megatron's interleaved 1F1B; ``fthenb_order``: its
``PipelineParallelWithInterleaveFthenB``, every forward, then every backward;
``balanced_memory_order``: its ``VPPFhenBInBalancedMemory``, FthenB's chunks with a 1F1B middle);
a chunk takes the micro-batches in order.

Paddle sends with asynchronous ring exchanges; pycoll's stages send and receive with blocking
``send``/``recv``, which deadlock as soon as two stages each wait on a message the other sends
later. ``programs`` rules that out for any feasible order: it times the order (each F or B one
unit, starting when the stage is free and what it needs has arrived), then places every message
at the moment its producer finishes, on the sender and the receiver alike. Every stage then meets
the messages it takes part in in one global order (time, then sending stage), so the earliest
pending message always has both its ends ready: no wait can close a circle, whatever the engine
(MPI or NCCL, eager or rendezvous sends). An order that cannot run at all (a stage waiting for a
result that is never computed) is refused when the programs are built. The gradients do not
depend on the order: each chunk's gradients are summed over the micro-batches either way.
"""
from __future__ import annotations

from typing import Callable, Dict, List, Tuple

Work = Tuple[str, int, int]  # ("F" or "B", chunk, micro-batch)
# ("F"/"B", chunk, micro-batch), or a message: ("send_forward"/"recv_forward"/"send_backward"/
# "recv_backward", chunk, micro-batch) where chunk and micro-batch name this stage's work it belongs to
Action = Tuple[str, int, int]


def interleaved_order(num_stages: int, stage: int, num_chunks: int, accumulate_steps: int,
                      forward_only: bool = False) -> List[Work]:
    """paddle's interleaved 1F1B order on ``stage`` (its ``_get_virtual_pp_rank`` without the
    best-unbalanced option): forward step ``i`` runs chunk ``i // first`` for the first
    ``first * V`` steps (``first = M % P + P``), then chunks in turns of P steps; backward step
    ``j`` runs the chunk mirrored (``V - 1 -``) from that; ``2 (P - stage - 1) + (V - 1) first``
    forwards first, then one forward and one backward at a time, then the remaining backwards."""
    first = accumulate_steps % num_stages + num_stages
    steps = accumulate_steps * num_chunks

    def chunk(step: int, forward: bool) -> int:
        if step < first * num_chunks:
            c = step // first
        else:
            c = (step - first * num_chunks) % (num_stages * num_chunks) // num_stages
        return c if forward else num_chunks - 1 - c

    if forward_only:
        startup = steps
    else:
        startup = min(2 * (num_stages - stage - 1) + (num_chunks - 1) * first, steps)
    kinds = ["F"] * startup
    for _ in range(steps - startup):
        kinds += ["F", "B"]
    kinds += ["B"] * (0 if forward_only else startup)
    return _numbered(kinds, chunk)


def fthenb_order(num_stages: int, stage: int, num_chunks: int, accumulate_steps: int,
                 forward_only: bool = False) -> List[Work]:
    """paddle's FthenB order: every micro-batch through chunk 0, then chunk 1, ...; then the
    backwards, last chunk first."""
    steps = accumulate_steps * num_chunks

    def chunk(step: int, forward: bool) -> int:
        c = step % steps // accumulate_steps
        return c if forward else num_chunks - 1 - c
    return _numbered(["F"] * steps + ([] if forward_only else ["B"] * steps), chunk)


def balanced_memory_order(num_stages: int, stage: int, num_chunks: int, accumulate_steps: int,
                          forward_only: bool = False) -> List[Work]:
    """paddle's VPPFhenBInBalancedMemory order: FthenB's chunk for each forward and backward step,
    but only ``M (V - 1) + P - stage - 1`` forwards first, then one forward and one backward at a
    time (``M - (P - stage - 1)`` pairs), then the remaining backwards; forward-only runs are
    FthenB's."""
    if forward_only:
        return fthenb_order(num_stages, stage, num_chunks, accumulate_steps, True)
    steps = accumulate_steps * num_chunks
    startup = accumulate_steps * (num_chunks - 1) + num_stages - stage - 1

    def chunk(step: int, forward: bool) -> int:
        c = step % steps // accumulate_steps
        return c if forward else num_chunks - 1 - c
    return _numbered(["F"] * startup + ["F", "B"] * (steps - startup) + ["B"] * startup, chunk)


def _numbered(kinds: List[str], chunk_of: Callable[[int, bool], int]) -> List[Work]:
    """Each F and B with its chunk (from its step among its kind) and micro-batch (each chunk's
    in order)."""
    counts = {"F": 0, "B": 0}
    taken: Dict[Tuple[str, int], int] = {}
    order: List[Work] = []
    for kind in kinds:
        c = chunk_of(counts[kind], kind == "F")
        counts[kind] += 1
        m = taken.get((kind, c), 0)
        taken[(kind, c)] = m + 1
        order.append((kind, c, m))
    return order


def programs(orders: List[List[Work]], num_chunks: int) -> List[List[Action]]:
    """Each stage's program for ``orders`` (one per stage): its work and its messages, every
    message placed alike on both its ends (see the module's docstring). Raises ValueError when
    the orders cannot run."""
    num_stages = len(orders)
    last = num_stages * num_chunks - 1
    finish = _finish_times(orders, num_chunks)
    keyed: List[List[Tuple[Tuple[int, int, int], Action]]] = [[] for _ in range(num_stages)]
    for (kind, k, m), t in finish.items():
        stage, c = k % num_stages, k // num_stages
        keyed[stage].append(((t, 0, stage), (kind, c, m)))
        if kind == "F" and k < last:
            peer = (k + 1) % num_stages
            keyed[stage].append(((t, 1, stage), ("send_forward", c, m)))
            keyed[peer].append(((t, 1, stage), ("recv_forward", (k + 1) // num_stages, m)))
        elif kind == "B" and k > 0:
            peer = (k - 1) % num_stages
            keyed[stage].append(((t, 1, stage), ("send_backward", c, m)))
            keyed[peer].append(((t, 1, stage), ("recv_backward", (k - 1) // num_stages, m)))
    return [[action for _, action in sorted(stage_keyed)] for stage_keyed in keyed]


def _finish_times(orders: List[List[Work]], num_chunks: int) -> Dict[Tuple[str, int, int], int]:
    """When each (kind, virtual stage, micro-batch) finishes if every F and B takes one unit and
    starts once its stage is free and what it needs is done."""
    num_stages = len(orders)
    last = num_stages * num_chunks - 1
    done: Dict[Tuple[str, int, int], int] = {}
    at = [0] * num_stages
    free = [0] * num_stages
    moved = True
    while moved:
        moved = False
        for stage, order in enumerate(orders):
            while at[stage] < len(order):
                kind, c, m = order[at[stage]]
                k = c * num_stages + stage
                needs = _needs(kind, k, m, last)
                if any(n not in done for n in needs):
                    break
                done[(kind, k, m)] = free[stage] = max([free[stage]] + [done[n] for n in needs]) + 1
                at[stage] += 1
                moved = True
    stuck = [(stage, order[at[stage]]) for stage, order in enumerate(orders) if at[stage] < len(order)]
    if stuck:
        raise ValueError(f"pipeline schedule: the stages' orders cannot run; (stage, next work) waiting for "
                         f"work never done: {stuck}")
    return done


def _needs(kind: str, k: int, m: int, last: int) -> List[Tuple[str, int, int]]:
    """What (kind, virtual stage k, micro-batch m) needs done first."""
    if kind == "F":
        return [("F", k - 1, m)] if k > 0 else []
    return [("F", k, m)] + ([("B", k + 1, m)] if k < last else [])

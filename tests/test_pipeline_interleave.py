"""fleet's interleaved pipelines (``PipelineLayer(num_virtual_pipeline_stages=v)``,
``PipelineParallelWithInterleave``, ``PipelineParallelWithInterleaveFthenB``) and its sharding
wrapper (``ShardingParallel``). On real ranks (tests/ranks/pipeline_interleave.py,
tests/ranks/sharding_parallel.py): pp=2 x v=2 and dp=2 x pp=2 x v=2 train like one process, with
paddle's layer-to-chunk cut, state keys and checkpoint names; sharding_degree=2 trains like one
process through a ShardingParallel with paddle's keys. In one process: the chunk order of each
step against paddle's, and every stage's program, run with blocking messages, finishing with
every message met by its own receive."""
import pytest

from conftest import assert_ok, launch
from pycoll.distributed.fleet.meta_parallel.interleave_schedule import fthenb_order, interleaved_order, programs


@pytest.mark.parametrize("mode, nprocs", [("pp2", 2), ("dp2pp2", 4)])
def test_interleaved_pipeline_trains_like_one_process(mode, nprocs, tmp_path):
    assert_ok(launch(nprocs, "pipeline_interleave.py", mode, tmp_path, timeout=120), expect_lines=nprocs)


def test_sharding_parallel_is_paddles_wrapper_and_trains_like_one_process():
    assert_ok(launch(2, "sharding_parallel.py", timeout=120), expect_lines=2)


# Paddle 3.3.1's PipelineParallelWithInterleave._get_virtual_pp_rank(step, forward) for steps
# 0..M*V-1 (best_unbalanced_scheduler off), and its FthenB class's for (3, 2, 3)
@pytest.mark.parametrize("stages, chunks, steps, forward, backward", [
    (3, 2, 7, [0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1], [1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0]),
    (2, 3, 4, [0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2], [2, 2, 1, 1, 0, 0, 2, 2, 1, 1, 0, 0])])
def test_interleaved_chunk_order_is_paddles(stages, chunks, steps, forward, backward):
    for stage in range(stages):
        order = interleaved_order(stages, stage, chunks, steps)
        assert [c for kind, c, _ in order if kind == "F"] == forward
        assert [c for kind, c, _ in order if kind == "B"] == backward
        # paddle's startup: 2 (P - stage - 1) + (V - 1)(M % P + P) forwards, then forward, backward in turn
        startup = min(2 * (stages - stage - 1) + (chunks - 1) * (steps % stages + stages), steps * chunks)
        steady = steps * chunks - startup
        assert [kind for kind, _, _ in order] == ["F"] * startup + ["F", "B"] * steady + ["B"] * startup


def test_fthenb_order_is_paddles():
    order = fthenb_order(3, 1, 2, 3)
    assert [c for kind, c, _ in order if kind == "F"] == [0, 0, 0, 1, 1, 1]
    assert [c for kind, c, _ in order if kind == "B"] == [1, 1, 1, 0, 0, 0]
    assert [kind for kind, _, _ in order] == ["F"] * 6 + ["B"] * 6


def run_blocking(progs, chunks):
    """Run the stages' programs with rendezvous sends (a send waits for the receive): the stages
    still waiting when nothing can move. Every F has its input, every B its output's gradient, and
    each send meets the receive of the same message."""
    stages = len(progs)
    last = stages * chunks - 1
    at, done, held = [0] * stages, set(), set()
    while True:
        moved = False
        for s, prog in enumerate(progs):
            while at[s] < len(prog) and prog[at[s]][0] in ("F", "B"):
                kind, c, m = prog[at[s]]
                k = c * stages + s
                assert kind == "B" or k == 0 or (s, "input", c, m) in held, (s, prog[at[s]])
                assert kind == "F" or (("F", k, m) in done and (k == last or (s, "grad", c, m) in held))
                done.add((kind, k, m))
                at[s] += 1
                moved = True
        for s, prog in enumerate(progs):
            if at[s] == len(prog) or not prog[at[s]][0].startswith("send"):
                continue
            op, c, m = prog[at[s]]
            forward = op == "send_forward"
            k, peer = c * stages + s, (s + 1) % stages if forward else (s - 1) % stages
            assert ("F" if forward else "B", k, m) in done
            if at[peer] < len(progs[peer]) and progs[peer][at[peer]][0].startswith("recv"):
                target = k + 1 if forward else k - 1
                assert progs[peer][at[peer]] == ("recv_forward" if forward else "recv_backward", target // stages, m)
                held.add((peer, "input" if forward else "grad", target // stages, m))
                at[s] += 1
                at[peer] += 1
                moved = True
        if not moved:
            return [(s, prog[at[s]]) for s, prog in enumerate(progs) if at[s] < len(prog)]


@pytest.mark.parametrize("stages", [2, 3, 4])
@pytest.mark.parametrize("chunks", [2, 3])
def test_every_program_runs_to_the_end_with_blocking_messages(stages, chunks):
    for steps in range(stages, 3 * stages + 2):
        for order, least in ((interleaved_order, 2 * stages), (fthenb_order, stages)):
            for forward_only in (False, True):
                if steps < least:
                    continue
                orders = [order(stages, s, chunks, steps, forward_only) for s in range(stages)]
                kinds = ("F",) if forward_only else ("F", "B")
                for stage_order in orders:  # each micro-batch through each chunk once each way
                    assert sorted(stage_order) == sorted((k, c, m) for k in kinds for c in range(chunks)
                                                         for m in range(steps))
                progs = programs(orders, chunks)
                assert run_blocking(progs, chunks) == [], (stages, chunks, steps, order.__name__, forward_only)


def test_an_order_that_cannot_run_is_refused():
    # stage 1 takes micro-batch 1 first, which stage 0 computes only after its chunk 1 has run
    # micro-batch 0, which needs stage 1's micro-batch 0: each waits on the other
    orders = [[("F", 0, 0), ("F", 1, 0), ("F", 0, 1), ("F", 1, 1)],
              [("F", 0, 1), ("F", 0, 0), ("F", 1, 0), ("F", 1, 1)]]
    with pytest.raises(ValueError, match="the stages' orders cannot run"):
        programs(orders, 2)

"""pycoll-bench's collectives (pycoll/bench/collectives/): one module per collective found by the
registry, nccl-tests' bus-bandwidth factors and buffer layouts, and each op's expected result."""
import os

import numpy as np
import pytest

from pycoll.backends.reduce_op import ReduceOp
from pycoll.bench import cli, collectives, report
from pycoll.bench.collectives import OPS, busbw_factor
from pycoll.bench.ops import Context, Op

COLLECTIVES = ["all_reduce", "reduce", "broadcast", "all_gather", "reduce_scatter", "scatter",
               "alltoall", "sendrecv"]


def test_the_registry_finds_one_module_per_collective_in_order():
    assert list(OPS) == COLLECTIVES
    folder = os.path.dirname(collectives.__file__)
    for name, op in OPS.items():
        assert os.path.exists(os.path.join(folder, f"{name}.py"))
        assert type(op).__module__ == f"pycoll.bench.collectives.{name}"
        for factory in ("expected", "through_pycoll", "through_mpi", "through_nccl"):
            assert getattr(type(op), factory) is not getattr(Op, factory), (name, factory)
        assert cli.parse([name])[1].ops == [name]


GATHER = """
from pycoll.bench.ops import Blocked, Layout


class Gather(Blocked):
    name, position, rooted, mpi_call = "gather", 65, True, "Gather"

    def layout(self, total, nranks):
        return Layout(total // nranks, total // nranks, total)


OP = Gather()
"""


def _package(root, name, modules):
    folder = root / name
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    for module, text in modules.items():
        (folder / f"{module}.py").write_text(text)
    return str(folder)


def test_a_new_collective_is_one_new_module(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    first = GATHER.replace('"gather", 65', '"zeta", 5')  # listed by position, not by name
    folder = _package(tmp_path, "more_collectives",
                      {"gather": GATHER, "zeta": first, "_helpers": "x = 1\n"})
    found = collectives.discover("more_collectives", [folder])
    assert list(found) == ["zeta", "gather"] and found["gather"].busbw_factor(4) == 0.75
    for name, op in found.items():  # as if the file were in pycoll/bench/collectives
        monkeypatch.setitem(OPS, name, op)
    _, cfg = cli.parse(["gather", "-r", "1"])
    assert cfg.ops == ["gather"] and cfg.problems(2) == []
    _, cfg = cli.parse(["gather", "-r", "2"])  # a rooted op: its root is checked
    assert cfg.problems(2) == ["-r/--root 2: the job has 2 ranks; give a rank in [0, 2)"]
    assert "gather" in cli.parse(["all"])[1].ops
    assert report.table_header("gather", compare=True)[0] == "# gather  (raw: Gather)"


def test_a_module_without_its_op_is_refused(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    misnamed = GATHER.replace('"gather", 65', '"gathr", 65')
    folder = _package(tmp_path, "bad_collectives", {"gather": misnamed})
    with pytest.raises(ImportError, match="bad_collectives.gather must define OP"):
        collectives.discover("bad_collectives", [folder])


# -- what is measured -----------------------------------------------------------------------

@pytest.mark.parametrize("nranks, ring, blocked", [(1, 0.0, 0.0), (2, 1.0, 0.5), (4, 1.5, 0.75),
                                                   (8, 1.75, 0.875)])
def test_busbw_factors_are_nccl_tests(nranks, ring, blocked):
    assert busbw_factor("all_reduce", nranks) == ring
    for op in ("all_gather", "reduce_scatter", "alltoall", "scatter"):
        assert busbw_factor(op, nranks) == blocked
    for op in ("broadcast", "reduce", "sendrecv"):
        assert busbw_factor(op, nranks) == 1.0


def test_busbw_factor_refuses_unknown_ops_and_rank_counts():
    with pytest.raises(ValueError, match="op='gather'"):
        busbw_factor("gather", 2)
    with pytest.raises(ValueError, match="nranks=0"):
        busbw_factor("all_reduce", 0)


@pytest.mark.parametrize("op, count, send, recv", [
    ("all_reduce", 1024, 1024, 1024), ("broadcast", 1024, 1024, 1024),
    ("reduce", 1024, 1024, 1024), ("sendrecv", 1024, 1024, 1024),
    ("all_gather", 256, 256, 1024), ("reduce_scatter", 256, 1024, 256),
    ("scatter", 256, 1024, 256), ("alltoall", 256, 1024, 1024),
])
def test_layouts_split_the_size_as_nccl_tests(op, count, send, recv):
    layout = OPS[op].layout(1024, 4)
    assert (layout.count, layout.send, layout.recv) == (count, send, recv)
    assert max(send, recv) == 1024  # the reported size is the sweep size


def test_expected_results_follow_each_ops_semantics():
    inputs = {0: np.array([1, 2, 3, 4]), 1: np.array([10, 20, 30, 40])}.__getitem__
    ctx = Context(rank=1, nranks=2, root=0, redop=ReduceOp.SUM)
    assert OPS["all_reduce"].expected(inputs, ctx, 4).tolist() == [11, 22, 33, 44]
    assert OPS["reduce"].expected(inputs, ctx, 4) is None  # rank 1 is not the root
    assert OPS["broadcast"].expected(inputs, ctx, 4).tolist() == [1, 2, 3, 4]
    assert OPS["reduce_scatter"].expected(inputs, ctx, 2).tolist() == [33, 44]
    assert OPS["scatter"].expected(inputs, ctx, 2).tolist() == [3, 4]
    assert OPS["alltoall"].expected(inputs, ctx, 2).tolist() == [3, 4, 30, 40]
    assert OPS["sendrecv"].expected(inputs, ctx, 4).tolist() == [1, 2, 3, 4]
    ctx.redop = ReduceOp.MAX
    assert OPS["all_reduce"].expected(inputs, ctx, 4).tolist() == [10, 20, 30, 40]


def test_the_copy_before_an_out_of_place_run_is_a_memcpy_for_device_arrays():
    """Device buffers are copied by copy_from_device_async (the copy engine), host ones by
    assignment; either way the call runs after the copy."""
    import strict_cupy

    from pycoll.bench.calls import copy_then

    ran, device_work = [], []
    with strict_cupy.installed() as cp:
        src, dst = cp.arange(6, dtype=cp.float32), cp.zeros(6, dtype=cp.float32)
        run = copy_then(src, dst, lambda: ran.append(dst.get().tolist()))
        strict_cupy._COUNTER[0] = lambda kind, name: device_work.append((kind, name))
        try:
            run()
        finally:
            strict_cupy._COUNTER[0] = None
    assert ran == [[0, 1, 2, 3, 4, 5]]
    assert [w for w in device_work if w[0] == "op"] == [("op", "memcpy")]
    host = np.zeros(3, dtype=np.float16)
    copy_then(np.ones(3, dtype=np.float16), host, lambda: ran.append(host.tolist()))()
    assert ran[-1] == [1, 1, 1]

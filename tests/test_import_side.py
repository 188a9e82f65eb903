"""Importing the tensor side loads nothing of the distributed side (DESIGN.md's layers, at run time).

Each check runs in a fresh interpreter, since this test process has long imported everything.
"""
import json
import subprocess
import sys

import pytest

DISTRIBUTED_SIDE = ("pycoll.distributed", "pycoll.parallel", "pycoll.backends", "pycoll.io", "mpi4py")
TIMEOUT_S = 120


def fresh_interpreter(code: str) -> dict:
    """Run `code` in a new Python, then report what it loaded of the distributed side, as JSON."""
    report = ("import json, sys\n"
              f"side = {DISTRIBUTED_SIDE!r}\n"
              "loaded = sorted(m for m in sys.modules if m.split('.')[0] == 'mpi4py'"
              " or any(m == p or m.startswith(p + '.') for p in side))\n"
              "print(json.dumps({'loaded': loaded, 'pycoll': 'pycoll' in sys.modules}))\n")
    done = subprocess.run([sys.executable, "-c", code + "\n" + report], capture_output=True,
                          text=True, timeout=TIMEOUT_S)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("statement", ["import pycoll.tensor", "import pycoll.nn", "import pycoll",
                                       "import pycoll.autograd", "import pycoll.optimizer"])
def test_the_tensor_side_loads_nothing_distributed(statement):
    found = fresh_interpreter(statement)
    assert found["pycoll"]
    assert found["loaded"] == [], f"{statement} loaded {found['loaded']}"


def test_dataparallel_and_io_resolve_on_first_use():
    """`pycoll.DataParallel` and `pycoll.io` still resolve, each bringing its side in (which also
    shows that the check above sees the distributed side when it is there)."""
    found = fresh_interpreter("import pycoll\n"
                              "first = pycoll.DataParallel\n"
                              "from pycoll.parallel.data_parallel import DataParallel\n"
                              "assert first is DataParallel, first\n"
                              "from pycoll import DataParallel as again\n"
                              "assert again is DataParallel")
    assert {"pycoll.parallel", "pycoll.distributed"} <= set(found["loaded"])
    assert "pycoll.io" not in found["loaded"]
    found = fresh_interpreter("from pycoll import io\n"
                              "import pycoll.io\n"
                              "assert io is pycoll.io and io.DistributedBatchSampler")
    assert "pycoll.io" in found["loaded"]
    found = fresh_interpreter("import pycoll\n"  # paddle's `import paddle; paddle.distributed.<...>`
                              "first = pycoll.distributed\n"
                              "import pycoll.distributed as dist\n"
                              "assert first is dist and first.get_world_size() == 1")
    assert "pycoll.distributed" in found["loaded"]


def test_an_unknown_attribute_of_pycoll_is_still_an_attribute_error():
    import pycoll

    with pytest.raises(AttributeError, match="module 'pycoll' has no attribute 'no_such_name'"):
        pycoll.no_such_name
    assert {"DataParallel", "io", "distributed"} <= set(dir(pycoll))


def test_dir_lists_the_names_a_module_serves_on_first_use():
    """dir() (and so tab completion, API listings) shows what a module's __getattr__ imports late:
    paddle's modules list these names."""
    import pycoll.distributed as dist
    import pycoll.distributed.fleet.meta_parallel as meta_parallel
    import pycoll.incubate
    import pycoll.nn
    import pycoll.sparse.nn

    assert "SyncBatchNorm" in dir(pycoll.nn) and "SyncBatchNorm" in dir(pycoll.sparse.nn)
    assert {"DataParallel", "ProcessMesh", "fleet", "sharding", "InMemoryDataset"} <= set(dir(dist))
    assert "parallel_layers" in dir(meta_parallel) and "distributed" in dir(pycoll.incubate)
    for name in ("SyncBatchNorm", "DataParallel", "fleet"):
        assert getattr(pycoll.nn if name == "SyncBatchNorm" else dist, name) is not None

"""Calls paddle's ``dist.launch()`` from Python after the imports in the order argv[1] names
(``package-first``: ``import pycoll.distributed.launch`` before ``dist.launch`` is first read,
which binds the package to that name; ``function-first``: the other way), on the command line
that follows."""
import importlib
import sys

import pycoll.distributed as dist

if sys.argv[1] == "function-first":
    assert callable(dist.launch)
importlib.import_module("pycoll.distributed.launch")
sys.argv = ["launch", *sys.argv[2:]]
dist.launch()

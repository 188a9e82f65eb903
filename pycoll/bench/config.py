"""What one pycoll-bench run is: the ops, the size sweep, the data types and reductions (one
sweep per :class:`Case`), the iteration counts; and the pure helpers that turn
nccl-tests-style flags into them."""
from __future__ import annotations

import importlib
import re
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np

from pycoll.backends.reduce_op import ReduceOp
from pycoll.bench.collectives import OPS

ALL = "all"  # -d all, -o all: every type, every reduction, as nccl-tests has them
# nccl-tests' type names (and NumPy's) -> NumPy dtypes; the table shows nccl-tests' name.
# bfloat16 is ml_dtypes' type, which NumPy knows only once ml_dtypes is imported.
DTYPES: Dict[str, str] = {
    "int8": "int8", "char": "int8", "uint8": "uint8", "int32": "int32", "int": "int32",
    "uint32": "uint32", "int64": "int64", "uint64": "uint64", "half": "float16",
    "float16": "float16", "float": "float32", "float32": "float32", "double": "float64",
    "float64": "float64", "bfloat16": "bfloat16",
}
# -d all, in nccl-tests' order
ALL_DTYPES = ("int8", "uint8", "int32", "uint32", "int64", "uint64", "float16", "float32",
              "float64", "bfloat16")
BFLOAT16_MISSING = ("bfloat16 needs the ml_dtypes package, through which NumPy knows it "
                    "(pip install ml_dtypes)")
_TYPE_NAMES = {"int8": "int8", "uint8": "uint8", "int32": "int32", "uint32": "uint32",
               "int64": "int64", "uint64": "uint64", "float16": "half", "float32": "float",
               "float64": "double"}
REDOPS: Dict[str, int] = {"sum": ReduceOp.SUM, "prod": ReduceOp.PROD, "max": ReduceOp.MAX,
                          "min": ReduceOp.MIN, "avg": ReduceOp.AVG}
TIME_COMBINE = {0: "rank 0", 1: "average over ranks", 2: "minimum over ranks",
                3: "maximum over ranks"}

MAX_SIZES = 4096
# Without -n, each size runs about this many bytes (at least MIN_ITERS, at most MAX_ITERS
# calls): enough calls that small sizes are timed well, few enough that the default sweep
# to 32 MiB stays within seconds.
AUTO_BYTES = 256 << 20
MIN_ITERS, MAX_ITERS = 5, 1000

_SIZE = re.compile(r"^\s*(\d+(?:\.\d*)?)\s*([kKmMgG]?)\s*$")
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def parse_size(text: str) -> int:
    """Bytes from ``"8"``, ``"64K"``, ``"32M"``, ``"1G"``, ``"1.5M"`` (binary units, as nccl-tests)."""
    match = _SIZE.match(text)
    if not match:
        raise ValueError(f"{text!r} is not a size: give bytes with an optional K, M or G suffix, "
                         f"such as 8, 64K or 32M")
    value = float(match.group(1)) * _UNITS[match.group(2).lower()]
    if value != int(value):
        raise ValueError(f"{text!r} is not a whole number of bytes")
    return int(value)


def sweep(minbytes: int, maxbytes: int, factor: Optional[int], step: Optional[int]) -> List[int]:
    """The sizes from ``minbytes`` (-b) to ``maxbytes`` (-e): times ``factor`` (-f), or plus
    ``step`` bytes (-i); exactly one of the two is given. ValueError names the flags."""
    if (factor is None) == (step is None):
        raise ValueError("give exactly one of -f/--stepfactor and -i/--stepbytes")
    if minbytes > maxbytes:
        raise ValueError(f"-b/--minbytes {minbytes} is larger than -e/--maxbytes {maxbytes}")
    if factor is not None and (factor < 2 or minbytes == 0):
        raise ValueError(f"-f/--stepfactor {factor} from -b/--minbytes {minbytes} never grows: "
                         f"the factor must be at least 2 and the minimum size at least 1")
    if step is not None and step < 1:
        raise ValueError(f"-i/--stepbytes {step} never grows: it must be at least 1")
    sizes, size = [], minbytes
    while size <= maxbytes:
        sizes.append(size)
        if len(sizes) > MAX_SIZES:
            raise ValueError(f"the sweep from {minbytes} to {maxbytes} bytes has more than "
                             f"{MAX_SIZES} sizes; use a larger -f/--stepfactor or -i/--stepbytes")
        size = size * factor if factor is not None else size + step
    return sizes


def auto_iters(nbytes: int) -> int:
    """Timed calls for a size of ``nbytes`` when -n is not given."""
    return max(MIN_ITERS, min(MAX_ITERS, AUTO_BYTES // max(nbytes, 1)))


def type_name(dtype: np.dtype) -> str:
    """nccl-tests' name for ``dtype`` (``float`` for float32)."""
    return _TYPE_NAMES.get(dtype.name, dtype.name)


def has_ml_dtypes() -> bool:
    """Whether ml_dtypes imports (importing it is what teaches NumPy bfloat16)."""
    try:
        importlib.import_module("ml_dtypes")
    except ImportError:
        return False
    return True


def parse_dtypes(name: str) -> List[np.dtype]:
    """The dtypes of ``-d name``: one, or for ``all`` every type of nccl-tests' ``-d all``
    that NumPy knows here (bfloat16 where ml_dtypes is installed). ValueError for bfloat16
    without ml_dtypes."""
    if name == ALL:
        return [np.dtype(n) for n in ALL_DTYPES if n != "bfloat16" or has_ml_dtypes()]
    if DTYPES[name] == "bfloat16" and not has_ml_dtypes():
        raise ValueError(BFLOAT16_MISSING)
    return [np.dtype(DTYPES[name])]


@dataclass(frozen=True)
class Case:
    """One sweep of an op: its data type and, for a reducing op, its reduction (-o name)."""

    dtype: np.dtype
    redop: Optional[str] = None

    @property
    def reduce_op(self) -> int:
        """The ReduceOp of the reduction (SUM for an op without one: its inputs are SUM's)."""
        return REDOPS[self.redop or "sum"]

    def __str__(self) -> str:
        return type_name(self.dtype) + (f" {self.redop}" if self.redop else "")


Refusal = Callable[[np.dtype, int], Optional[str]]  # the engine's reason it cannot reduce


@dataclass
class Config:
    """A validated run, as every rank receives it."""

    ops: List[str]
    sizes: List[int]
    dtypes: List[np.dtype] = field(default_factory=lambda: [np.dtype(np.float32)])
    redops: List[str] = field(default_factory=lambda: ["sum"])
    root: int = 0
    iters: Optional[int] = None      # None: auto_iters per size
    warmup: int = 5
    check: bool = True
    average: int = 1                 # -a: how ranks' times combine (TIME_COMBINE)
    compare: bool = False            # --compare raw
    backend: str = "cpu"
    nprocs: Optional[int] = None
    progress: bool = False
    step: str = ""                   # the sweep's step as the header shows it
    json_path: Optional[str] = None
    csv_path: Optional[str] = None
    plot_path: Optional[str] = None

    def iterations(self, nbytes: int) -> int:
        return self.iters if self.iters is not None else auto_iters(nbytes)

    def cases(self, reduces: bool) -> List[Case]:
        """The sweeps of an op: one per data type, times one per reduction for a reducing op
        (types first, as nccl-tests loops)."""
        if not reduces:
            return [Case(dtype) for dtype in self.dtypes]
        return [Case(dtype, redop) for dtype in self.dtypes for redop in self.redops]

    def split(self, reduces: bool, refusal: Refusal) -> Tuple[List[Case], List[Tuple[Case, str]]]:
        """The cases of an op that run, and those left out, each with ``refusal``'s reason:
        the engine cannot reduce its type with its reduction. Data movement runs any type."""
        run, left_out = [], []
        for case in self.cases(reduces):
            why = refusal(case.dtype, case.reduce_op) if reduces else None
            if why:
                left_out.append((case, why))
            else:
                run.append(case)
        return run, left_out

    def problems(self, nranks: int, reduction_error: Optional[Refusal] = None) -> List[str]:
        """Why this run cannot go on ``nranks`` ranks, as messages naming the flag.

        ``reduction_error(dtype, op)`` is the engine's reason it cannot reduce ``dtype`` with
        ``op`` (None: it can); without it, the data types and reductions are not checked.
        With several types or reductions (-d all, -o all) only a run where none can be reduced
        is refused; the others leave those cases out.
        """
        errors = []
        if self.nprocs is not None and self.nprocs != nranks:
            errors.append(f"--nprocs {self.nprocs}: this job already has {nranks} ranks (started "
                          f"by mpiexec or the launcher); leave --nprocs out or make them agree")
        if any(OPS[o].rooted for o in self.ops) and self.root >= nranks:
            errors.append(f"-r/--root {self.root}: the job has {nranks} ranks; give a rank in "
                          f"[0, {nranks})")
        if reduction_error is not None and any(OPS[o].reduces for o in self.ops):
            run, left_out = self.split(True, reduction_error)
            if not run:
                why = "; ".join(dict.fromkeys(why for _, why in left_out))
                dtype = type_name(self.dtypes[0]) if len(self.dtypes) == 1 else ALL
                redop = self.redops[0] if len(self.redops) == 1 else ALL
                errors.append(f"-d/--datatype {dtype} with -o/--op {redop}: {why}")
        needs = OPS[self.ops[0]].min_ranks
        if len(self.ops) == 1 and nranks < needs:
            errors.append(f"{self.ops[0]} needs at least {needs} ranks; the job has {nranks} "
                          f"(see --nprocs)")
        return errors

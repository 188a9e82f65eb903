"""paddle's ``paddle.amp.debugging``: finding NaN / Inf in tensors and counting the ops a block runs.

``check_numerics(tensor, op_type, var_name, debug_mode)`` returns paddle's two tensors: int64
``[num_nan, num_inf, num_zero]`` and float32 ``[max, min, mean]`` (max and min skip NaN unless the
first value is NaN, as paddle's kernel, which starts from it; the mean does not skip NaN; an
empty tensor gives zeros), and reports as paddle's CPU kernel prints, word for word:
``[PRECISION] [ERROR] in [device=cpu, op=.., tensor=.., dtype=fp32], numel=.., num_nan=..``
for a tensor with NaN or Inf, and under ``CHECK_ALL`` a ``[PRECISION] in [...]`` line for the
others. pycoll writes those lines to its logger (``logging.getLogger("pycoll")``) instead of
stdout, at WARNING level, so that they show by default as paddle's prints do: the error lines
and the ``CHECK_ALL`` lines alike, which the caller asked for. Under ``CHECK_NAN_INF_AND_ABORT``
(the default) a NaN or Inf raises paddle's RuntimeError ("There are NAN or INF (num_nan=..) in [...]").

``enable_tensor_checker(TensorCheckerConfig(enable=True, ...))`` runs that check on the output of
every op pycoll records (its autograd record point, ``pycoll._graph.add_record_hook``), named by
pycoll's op names (``log``, ``sqrt``, ``multiply``...), filtered by ``checked_op_list`` /
``skipped_op_list``, until ``disable_tensor_checker()``. ``check_layer_numerics`` decorates a
Layer's ``forward``: its first input and the output of every op it runs are checked (NaN / Inf
raise). The operator-stats functions count the ops recorded between enable and disable by name
and dtype and log paddle's table (WARNING level, so the table asked for is seen by default).

Not here: paddle's dump files (``output_dir``) and the step window (``debug_step``) are refused,
and ``compare_accuracy``, which compares two such dumps, raises NotImplementedError.
"""
from __future__ import annotations

import contextlib
import functools
import random
from collections import Counter
from enum import Enum
from typing import Any, Callable, Iterator, Optional, Sequence, Tuple

import numpy as np

from pycoll import _graph
from pycoll._logging import logger
from pycoll._tensor_ops import as_tensor
from pycoll.device import array_module
from pycoll.random import seed as seed_pycoll
from pycoll.tensor import Tensor, wrap

__all__ = ["DebugMode", "TensorCheckerConfig", "check_layer_numerics", "check_numerics", "collect_operator_stats",
           "compare_accuracy",
           "disable_operator_stats_collection", "disable_tensor_checker", "enable_operator_stats_collection",
           "enable_tensor_checker"]


class DebugMode(Enum):
    """What a check does on NaN / Inf (paddle's values)."""
    CHECK_NAN_INF_AND_ABORT = 0
    CHECK_NAN_INF = 1
    CHECK_ALL_FOR_OVERFLOW = 2
    CHECK_ALL = 3


_DTYPE_NAMES = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float64": "fp64"}


def _place(arr: Any) -> str:
    device = getattr(arr, "device", None)
    return f"gpu:{device.id}" if hasattr(device, "id") else "cpu"


def check_numerics(tensor: Tensor, op_type: str, var_name: str,
                   debug_mode: DebugMode = DebugMode.CHECK_NAN_INF_AND_ABORT) -> Tuple[Tensor, Tensor]:
    """(stats int64 [num_nan, num_inf, num_zero], values float32 [max, min, mean]) of a floating
    ``tensor``; reports and, under CHECK_NAN_INF_AND_ABORT, raises on NaN / Inf (module text)."""
    if not isinstance(debug_mode, DebugMode):
        raise TypeError(f"check_numerics: debug_mode must be a paddle.amp.debugging.DebugMode, got {debug_mode!r}")
    arr = as_tensor(tensor)._array
    name = _DTYPE_NAMES.get(str(arr.dtype))
    if name is None:
        raise TypeError(f"check_numerics: tensor must hold floating values (float16, bfloat16, float32, float64), "
                        f"got dtype {arr.dtype}")
    xp = array_module(arr)
    vals = arr.astype(xp.float32 if name != "fp64" else xp.float64).ravel()
    nan, inf = xp.isnan(vals), xp.isinf(vals)
    stats = xp.asarray([int(nan.sum()), int(inf.sum()), int((vals == 0).sum())], dtype=xp.int64)
    if vals.size == 0:
        values = xp.zeros(3, xp.float32)
    else:
        kept = vals[~nan]  # paddle's kernel starts max / min at the first value: a NaN there stays
        top, low = (kept.max(), kept.min()) if kept.size and not bool(nan[0]) else (xp.nan, xp.nan)
        values = xp.asarray([float(top), float(low), float(vals.mean())], dtype=xp.float32)
    num_nan, num_inf, num_zero = (int(v) for v in stats.tolist())
    where = f"[device={_place(arr)}, op={op_type}, tensor={var_name}, dtype={name}]"
    top, low, mean = (f"{float(v):e}" for v in values.tolist())
    if num_nan or num_inf:
        logger.warning(f"[PRECISION] [ERROR] in {where}, numel={vals.size}, num_nan={num_nan}, num_inf={num_inf}, "
                       f"num_zero={num_zero}, max={top}, min={low}, mean={mean}")
        if debug_mode is DebugMode.CHECK_NAN_INF_AND_ABORT:
            raise RuntimeError(f"(PreconditionNotMet) There are NAN or INF (num_nan={num_nan}, num_inf={num_inf}, "
                               f"num_zero={num_zero}) in {where}.")
    elif debug_mode is DebugMode.CHECK_ALL:
        logger.warning(f"[PRECISION] in {where}, numel={vals.size}, num_zero={num_zero}, max={top}, min={low}, "
                    f"mean={mean}")
    return wrap(stats), wrap(values)


def _op_name(backward: Callable) -> str:
    """The name an op records itself under: its ``__pycoll_op__`` name, else the function that
    defined its backward."""
    named = (getattr(backward, "__pycoll_op__", None) or {}).get("name")
    return named or getattr(backward, "__qualname__", "op").split(".<locals>")[0].rsplit(".", 1)[-1]


def _op_list(name: str, ops: Optional[Sequence[str]]) -> frozenset:
    if ops is None:
        return frozenset()
    if isinstance(ops, str) or not isinstance(ops, (list, tuple)) or not all(isinstance(o, str) for o in ops):
        raise TypeError(f"TensorCheckerConfig: {name} must be a list or tuple of op names, got {ops!r}")
    return frozenset(ops)


class TensorCheckerConfig:
    """What ``enable_tensor_checker`` checks: with ``enable``, the outputs of every recorded op
    (only those of ``checked_op_list`` when given; never those of ``skipped_op_list``) under
    ``debug_mode``. ``stack_height_limit`` is paddle's C++-stack option (nothing to print here).
    An enabled config seeds pycoll's, NumPy's and Python's generators with ``seed`` (123), so that a
    run checked twice draws the same values, and prints that, as paddle's does."""

    seed = 123

    def __init__(self, enable: bool, debug_mode: DebugMode = DebugMode.CHECK_NAN_INF_AND_ABORT,
                 output_dir: Optional[str] = None, checked_op_list: Optional[Sequence[str]] = None,
                 skipped_op_list: Optional[Sequence[str]] = None, debug_step: Optional[Sequence[int]] = None,
                 stack_height_limit: int = 1):
        if not isinstance(debug_mode, DebugMode):
            raise TypeError(f"TensorCheckerConfig: debug_mode must be a DebugMode, got {debug_mode!r}")
        if output_dir is not None:
            raise ValueError(f"TensorCheckerConfig: output_dir={output_dir!r}; pycoll writes no dump files, it "
                             f"reports to its logger: need None")
        if debug_step is not None:
            raise ValueError(f"TensorCheckerConfig: debug_step={debug_step!r}; pycoll checks every step while "
                             f"enabled (call enable/disable_tensor_checker around the steps): need None")
        self.enable, self.debug_mode, self.output_dir = bool(enable), debug_mode, output_dir
        self.checked_op_list, self.skipped_op_list = checked_op_list, skipped_op_list
        self.debug_step, self.stack_height_limit = debug_step, stack_height_limit
        self._checked = _op_list("checked_op_list", checked_op_list)
        self._skipped = _op_list("skipped_op_list", skipped_op_list)
        if self.enable:
            seed_pycoll(self.seed)
            np.random.seed(self.seed)
            random.seed(self.seed)
            print("AMP Debugging TensorCheckerConfig: seed ", self.seed)

    def _wants(self, op: str) -> bool:
        return op not in self._skipped and (not self._checked or op in self._checked)


_checker: list = []  # the record-hook handle while a tensor checker is on


def enable_tensor_checker(checker_config: TensorCheckerConfig) -> None:
    """Check every recorded op's floating outputs as ``checker_config`` says (module text)."""
    if not isinstance(checker_config, TensorCheckerConfig):
        raise TypeError(f"enable_tensor_checker: checker_config must be a TensorCheckerConfig, got "
                        f"{type(checker_config).__name__}")
    disable_tensor_checker()
    if not checker_config.enable:
        return

    _checker.append(_graph.add_record_hook(_checking_hook(checker_config.debug_mode, checker_config._wants)))


def _checking_hook(debug_mode: DebugMode, wants: Callable[[str], bool] = lambda op: True) -> Callable:
    """A record hook running :func:`check_numerics` on the floating outputs of the ops ``wants``."""
    def check(outputs: Sequence[Any], backward: Callable, inputs: Sequence[Any]) -> Callable:
        op = _op_name(backward)
        if wants(op):
            for out in outputs:
                if str(out._array.dtype) in _DTYPE_NAMES:
                    check_numerics(out, op, "", debug_mode)
        return backward
    return check


def disable_tensor_checker() -> None:
    """Stop the tensor checker (nothing happens if none is on)."""
    while _checker:
        _checker.pop().remove()


_layer_depth = [0]  # check_layer_numerics forwards running now (the outermost one checks)


def check_layer_numerics(func: Callable[..., Any]) -> Callable[..., Any]:
    """paddle's decorator for a Layer's ``forward(self, x, ...)``: ``x`` (which must be a Tensor,
    and is made to need a gradient, as paddle does) and the output of every op the forward runs
    are checked by :func:`check_numerics`, a NaN or Inf raising paddle's RuntimeError; the forward
    must return one Tensor. The check ends with the forward, also when it raises (paddle's flag
    stays on then). Unlike paddle, the backward's ops are not checked: pycoll's checker sees the
    ops the forward records."""
    if not callable(func):
        raise TypeError(f"check_layer_numerics: func must be a Layer's forward (callable), got {func!r}")

    @functools.wraps(func)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Tensor:
        if not args:
            raise RuntimeError("No elements found in args.")
        if not isinstance(args[0], Tensor):
            raise RuntimeError("First input of this layer must be tensor.")
        args[0].stop_gradient = False
        hook = None
        if _layer_depth[0] == 0:
            if str(args[0]._array.dtype) in _DTYPE_NAMES:
                check_numerics(args[0], "enable_check_model_nan_inf", "")
            hook = _graph.add_record_hook(_checking_hook(DebugMode.CHECK_NAN_INF_AND_ABORT))
        _layer_depth[0] += 1
        try:
            out = func(self, *args, **kwargs)
        finally:
            _layer_depth[0] -= 1
            if hook is not None:
                hook.remove()
        if not isinstance(out, Tensor):
            raise ValueError(f"check_layer_numerics: {getattr(func, '__qualname__', func)} must return one "
                             f"Tensor, got {type(out).__name__}")
        return out
    return wrapper


_stats: list = []  # [handle, Counter((op, column))] while operator stats are collected
_COLUMNS = {"float16": "FP16", "bfloat16": "BF16", "float32": "FP32"}


def enable_operator_stats_collection() -> None:
    """Count the ops recorded from now on by name and output dtype (FP16 / BF16 / FP32 / Other)."""
    _stop_stats(report=False)
    counts: Counter = Counter()

    def count(outputs: Sequence[Any], backward: Callable, inputs: Sequence[Any]) -> Callable:
        dtype = str(outputs[0]._array.dtype) if outputs else ""
        counts[(_op_name(backward), _COLUMNS.get(dtype, "Other"))] += 1
        return backward
    _stats.extend([_graph.add_record_hook(count), counts])


def disable_operator_stats_collection() -> None:
    """Stop counting and log paddle's op table of the counts (WARNING level of pycoll's logger)."""
    _stop_stats(report=True)


def _stop_stats(report: bool) -> None:
    if not _stats:
        return
    handle, counts = _stats
    _stats.clear()
    handle.remove()
    if not report:
        return
    lines = ["<" + " op list ".center(120, "-") + ">",
             "<" + " Op Name ".center(40, "-") + "|" + "|".join(f" {c} Calls ".center(19, "-")
                                                           for c in ("FP16", "BF16", "FP32", "Other")) + ">"]
    for op in sorted({op for op, _ in counts}):
        lines.append(f"  {op:<40}|" + "|".join(f"  {counts[(op, c)]:<17}" for c in ("FP16", "BF16", "FP32", "Other")))
    lines.append("<" + f" op count: {len({op for op, _ in counts})} ".center(120, "-") + ">")
    logger.warning("\n".join(lines))


@contextlib.contextmanager
def collect_operator_stats() -> Iterator[None]:
    """enable_operator_stats_collection() for the block, then disable (which logs the table)."""
    enable_operator_stats_collection()
    try:
        yield
    finally:
        disable_operator_stats_collection()


def compare_accuracy(dump_path: str, another_dump_path: str, output_filename: str, loss_scale: float = 1,
                     dump_all_tensors: bool = False) -> None:
    """paddle compares two runs' tensor-checker dump files into a spreadsheet; pycoll writes no
    dumps (its checker reports to the logger), so there is nothing to compare."""
    raise NotImplementedError("compare_accuracy: pycoll's tensor checker writes no dump files (output_dir is not "
                              "supported), so there are no dumps to compare")

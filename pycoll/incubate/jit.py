"""``paddle.incubate.jit``: ``inference`` turns a Layer's forward (or a function) into a static
program that Paddle Inference runs. pycoll has no static program (see ``pycoll.jit``): the decorated
forward runs eagerly without recording gradients, which is what paddle's predictor computes, so a
script written for paddle's inference decorator runs unchanged and gets the same values."""
from __future__ import annotations

import functools
from typing import Any, Callable, Optional

from pycoll.autograd import no_grad
from pycoll.nn.layer import Layer

_MARK = "_pycoll_inference"  # set on the functions `inference` gives


def inference(function: Optional[Callable] = None, cache_static_model: bool = False,
              save_model_dir: Optional[str] = None, memory_pool_init_size_mb: int = 1000,
              precision_mode: str = "float32", switch_ir_optim: bool = True, switch_ir_debug: bool = False,
              enable_cinn: bool = False, with_trt: bool = False, trt_precision_mode: str = "float32",
              trt_use_static: bool = False, collect_shape: bool = False, enable_new_ir: bool = False,
              exp_enable_use_cutlass: bool = False, delete_pass_lists: Any = None,
              skip_prune_program: bool = False) -> Any:
    """paddle's ``incubate.jit.inference``, as a call on a Layer or function or as a decorator (with
    or without arguments): a Layer gets its forward replaced and is returned, a function is
    returned wrapped; both compute under ``no_grad``. The predictor's options (precision, TensorRT,
    CINN, the model cache) have nothing to configure here."""
    if is_inference_mode(function):
        return function

    def decorator(target: Any) -> Any:
        if isinstance(target, Layer):
            target.forward = _without_gradients(target.forward)
            return target
        if not callable(target):
            raise TypeError(f"inference: function must be a Layer or a function, got {type(target).__name__}")
        return _without_gradients(target)

    return decorator if function is None else decorator(function)


def _without_gradients(fn: Callable) -> Callable:
    @functools.wraps(fn)
    def inferring(*args: Any, **kwargs: Any) -> Any:
        with no_grad():
            return fn(*args, **kwargs)
    setattr(inferring, _MARK, True)
    return inferring


def is_inference_mode(function: Any) -> bool:
    """Whether ``function`` (a Layer: its forward) was given by ``inference``."""
    target = function.forward if isinstance(function, Layer) else function
    return bool(getattr(target, _MARK, False))


__all__ = ["inference", "is_inference_mode"]

"""paddle's ``fleet.utils.mix_precision_utils``: training float16/bfloat16 parameters with
float32 gradients ("main grads", Megatron's name).

``MixPrecisionLayer(layers, dtype)`` gives each parameter a ``main_grad`` (None at first): when a
backward's gradient for the parameter is final, it is added, in float32, into ``main_grad`` and
``.grad`` is dropped (``move_grad_to_main_grad``, run by ``Tensor.register_grad_ready_hook``). So
gradients accumulated over several backwards are summed in float32, not in the parameters'
dtype. ``MixPrecisionOptimizer(optimizer)`` steps ``optimizer`` with the main grads and clears
them; ``MixPrecisionScaler(scaler)`` (paddle's, deprecated there) unscales them.

The layer does not cast the parameters: cast them yourself (``layer.to(dtype=...)``; paddle's
``amp.decorate(level='O2')``). Give the optimizer ``multi_precision=True`` to update
low-precision parameters through float32 copies.

Data parallelism over main grads is paddle's trainers' way: backward under ``no_sync()``, then
``fused_allreduce_gradients`` (which, as paddle's, averages ``main_grad`` where a parameter has
one). ``DataParallel``'s own bucketed all-reduce averages ``.grad``, which this layer's hook
empties, so under it alone each rank's ``main_grad`` stays its own. The sequence-parallel
all-reduce hooks sum ``main_grad`` too.
"""
from __future__ import annotations

import warnings
from typing import Any, Dict, List, Optional


from pycoll.device import array_module
from pycoll.distributed.fleet.collective_mode import get_hybrid_communicate_group
from pycoll.distributed.fleet.utils.hybrid_parallel_util import obtain_optimizer_parameters_list
from pycoll.distributed.sharding.group_sharded import scaler_over
from pycoll.nn import Layer
from pycoll.optimizer.update_forms import UpdateForms
from pycoll.tensor import Tensor, wrap

__all__ = ["MixPrecisionLayer", "MixPrecisionOptimizer", "MixPrecisionScaler"]

_DTYPES = ("float16", "bfloat16")


def move_grad_to_main_grad(param: Tensor) -> None:
    """Add ``param.grad`` into ``param.main_grad`` in float32 (made on the first call) and drop
    ``.grad``; nothing when there is no ``.grad``. Called as each backward's gradient is final,
    by MixPrecisionLayer's hook or by a hook that reads ``main_grad`` and may run before it."""
    grad = param.grad
    if grad is None:
        return
    arr = grad.array
    xp = array_module(arr)
    if param.main_grad is None:
        main = wrap(arr.astype(xp.float32))
        main.name = f"main_grad@{param.name}"
        param.main_grad = main
    else:
        param.main_grad.array[...] += arr.astype(xp.float32)
    param.clear_gradient(set_to_zero=False)


class MixPrecisionLayer(Layer):
    """``layers`` with a float32 ``main_grad`` gathering each parameter's gradients (see the
    module docstring); forward, ``state_dict`` and ``set_state_dict`` are ``layers``' own."""

    def __init__(self, layers: Layer, dtype: str = "float16"):
        if not isinstance(layers, Layer):
            raise TypeError(f"MixPrecisionLayer: layers must be a pycoll.nn.Layer, got {type(layers).__name__}")
        if dtype not in _DTYPES:
            raise ValueError(f"MixPrecisionLayer: dtype={dtype!r}; it must be 'float16' or 'bfloat16'")
        super().__init__(layers.full_name() + "_mix_precision")
        self._layers = layers
        self._dtype = dtype
        for param in layers.parameters():
            if not hasattr(param, "main_grad"):
                param.main_grad = None
                param.register_grad_ready_hook(move_grad_to_main_grad)

    def _inference_layer(self) -> Layer:
        return self._layers._inference_layer()  # jit.save keeps the model

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self._layers(*inputs, **kwargs)

    def state_dict(self, destination: Optional[dict] = None, include_sublayers: bool = True,
                   structured_name_prefix: str = "") -> Dict[str, Tensor]:
        return self._layers.state_dict(destination=destination, include_sublayers=include_sublayers,
                                       structured_name_prefix=structured_name_prefix)

    def set_state_dict(self, state_dict: Dict[str, Any], use_structured_name: bool = True) -> Any:
        return self._layers.set_state_dict(state_dict, use_structured_name=use_structured_name)


class MixPrecisionOptimizer(UpdateForms):
    """``optimizer`` stepping with the parameters' ``main_grad`` in place of ``.grad`` (parameters
    whose main_grad is None are left alone); everything else is ``optimizer``'s."""

    def __init__(self, optimizer: Any):
        if not hasattr(optimizer, "_parameter_list"):
            raise TypeError(f"MixPrecisionOptimizer: optimizer must be a pycoll optimizer, got "
                            f"{type(optimizer).__name__}")
        self._inner_opt = optimizer
        self._parameter_list = obtain_optimizer_parameters_list(optimizer)

    _grad_attr = "main_grad"  # what step() updates with

    def _stepped(self) -> List[Tensor]:
        return [p for p in self._parameter_list if not p.stop_gradient and getattr(p, "main_grad", None) is not None]

    def step(self) -> None:
        """``optimizer.step()`` on the main grads (its clipping, decay and groups included)."""
        stepped = {id(p) for p in self._stepped()}
        kept = [p.grad for p in self._parameter_list]
        try:
            for p in self._parameter_list:
                p.grad = p.main_grad if id(p) in stepped else None
            self._inner_opt.step()
        finally:
            for p, grad in zip(self._parameter_list, kept):
                p.grad = grad

    def step_grads(self) -> List[Any]:
        """The main grads the next step uses, to be changed in place (a GradScaler unscales them)."""
        return [p.main_grad.array for p in self._stepped()]

    def clear_grad(self, set_to_zero: bool = True) -> None:
        """Zero the main grads in place (or, with ``set_to_zero=False``, drop them); parameters
        without one (not under a MixPrecisionLayer) have their ``.grad`` cleared."""
        for p in self._parameter_list:
            if p.stop_gradient:
                continue
            if not hasattr(p, "main_grad"):
                p.clear_gradient(set_to_zero)
            elif p.main_grad is not None:
                if set_to_zero:
                    p.main_grad.array.fill(0)
                else:
                    p.main_grad = None

    def __getattr__(self, item: str) -> Any:
        return getattr(self._inner_opt, item)


class MixPrecisionScaler:
    """``scaler`` (a ``pycoll.amp.GradScaler``) for a MixPrecisionOptimizer: it unscales and checks
    the main grads (the optimizer's ``step_grads``), and with model, pipeline or sharding ranks
    (fleet's ranks more than its data-parallel ones) a step is skipped on every rank when any rank
    finds inf or NaN. Deprecated in paddle since 2.5.0 (for ``fleet.distributed_scaler``)."""

    def __init__(self, scaler: Any):
        warnings.warn('API "paddle.distributed.fleet.utils.mix_precision_utils.MixPrecisionScaler" is deprecated '
                      'since 2.5.0, and will be removed in future versions. Please use "paddle.distributed_scaler" '
                      'instead.', FutureWarning, stacklevel=2)
        try:
            hcg = get_hybrid_communicate_group()
        except RuntimeError:  # fleet.init not called: paddle's hcg is None
            hcg = None
        if hcg is not None and hcg.nranks > hcg.get_data_parallel_world_size():
            scaler = scaler_over(scaler, None)
        self._inner_scaler = scaler

    def __getattr__(self, item: str) -> Any:
        return getattr(self._inner_scaler, item)



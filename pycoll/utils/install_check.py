"""``paddle.utils.run_check``: whether pycoll computes, differentiates and trains here."""
from __future__ import annotations

from pycoll.creation import ones
from pycoll.device import get_device
from pycoll.elementwise_ops import isfinite
from pycoll.math_ops import mean
from pycoll.nn import Linear
from pycoll.optimizer import Adam


def _train_once() -> None:
    """One Adam step of a Linear(2, 4) layer on the current device; RuntimeError unless the loss
    is finite and the weights moved."""
    layer = Linear(2, 4)
    adam = Adam(learning_rate=0.001, parameters=layer.parameters())
    before = layer.weight.numpy().copy()
    loss = mean(layer(ones([2, 2])))
    loss.backward()
    adam.step()
    adam.clear_grad()
    if not isfinite(loss).item() or (layer.weight.numpy() == before).all():
        raise RuntimeError(f"run_check: a training step on {get_device()} did not work (loss {loss.item()})")


def run_check() -> None:
    """Train a tiny layer one step on the current device and print, as paddle's run_check does,
    that it worked (a RuntimeError says what did not). The collectives are checked by
    ``pycoll-bench`` and ``python -m pycoll.info``, which start ranks of their own."""
    print("Running verify pycoll program ... ")
    _train_once()
    print(f"pycoll works well on 1 {'CPU' if get_device() == 'cpu' else 'GPU'}.")
    print("pycoll is installed successfully! Let's start deep learning with pycoll now.")

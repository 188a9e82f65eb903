"""`Parameter` (a trainable, named leaf Tensor) and `ParamAttr` (how a layer creates one)."""
from __future__ import annotations

import itertools
from typing import Any, Optional

from pycoll.tensor import DTypeLike, Tensor

_param_ids = itertools.count()


class Parameter(Tensor):
    """A leaf Tensor that layers register and optimizers update.

    `stop_gradient` is False unless created with trainable=False; `name` is unique in the process
    (layers name theirs paddle-style, e.g. 'linear_0.w_0'). Unlike a plain Tensor a Parameter takes
    extra attributes, e.g. `is_distributed` for model-parallel weights.
    """

    def __init__(self, data: Any, dtype: DTypeLike = None, name: Optional[str] = None,
                 trainable: bool = True):
        super().__init__(data, dtype)
        self.stop_gradient = not trainable
        self.name = name if name is not None else f"param_{next(_param_ids)}"

    @property
    def trainable(self) -> bool:
        return not self.stop_gradient

    @trainable.setter
    def trainable(self, value: bool) -> None:
        self.stop_gradient = not value

    def __repr__(self) -> str:
        return f"Parameter {self.name} containing:\n{super().__repr__()}"


class ParamAttr:
    """Paddle's ParamAttr, kept small: a name, an initializer and whether the parameter trains."""

    def __init__(self, name: Optional[str] = None, initializer: Any = None, trainable: bool = True):
        self.name = name
        self.initializer = initializer
        self.trainable = trainable

    @staticmethod
    def from_arg(attr: Any, arg_name: str) -> "ParamAttr":
        """ParamAttr from what layers accept as weight_attr/bias_attr (not False: no parameter)."""
        from pycoll.nn.initializer import Initializer
        if attr is None:
            return ParamAttr()
        if isinstance(attr, ParamAttr):
            return attr
        if isinstance(attr, Initializer):
            return ParamAttr(initializer=attr)
        if isinstance(attr, str):
            return ParamAttr(name=attr)
        raise TypeError(f"{arg_name} must be None, False, a ParamAttr, an Initializer or a name, "
                        f"got {type(attr).__name__}")

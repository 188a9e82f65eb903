"""`Parameter` (a trainable, named leaf Tensor) and `ParamAttr` (how a layer creates one)."""
from __future__ import annotations

import itertools
from typing import Any, Optional

from pycoll.dtypes import DTypeLike

from pycoll.tensor import Tensor

_param_ids = itertools.count()
_deepcopy_ids = itertools.count()


class Parameter(Tensor):
    """A leaf Tensor that layers register and optimizers update.

    `stop_gradient` is False unless created with trainable=False; `name` is unique in the process
    (layers name theirs paddle-style, e.g. 'linear_0.w_0'). Unlike a plain Tensor a Parameter takes
    extra attributes, e.g. `is_distributed` for model-parallel weights.
    """

    def __init__(self, data: Any, dtype: DTypeLike = None, name: Optional[str] = None,
                 trainable: bool = True):
        super().__init__(data, dtype, zero_copy=True)  # over data itself: the layers and sharding hand their own arrays
        self.stop_gradient = not trainable
        self.name = name if name is not None else f"param_{next(_param_ids)}"
        # what a ParamAttr sets (paddle's attribute names and defaults)
        self.optimize_attr = {"learning_rate": 1.0}
        self.need_clip = True
        self.regularizer = None
        self.do_model_average = True
        self.is_distributed = False  # paddle's: True on a model-parallel layer's split weight

    @property
    def trainable(self) -> bool:
        return not self.stop_gradient

    @trainable.setter
    def trainable(self, value: bool) -> None:
        self.stop_gradient = not value

    def __repr__(self) -> str:
        return f"Parameter containing:\n{super().__repr__()}"  # paddle 3.3.1 prints no name

    def __deepcopy__(self, memo: dict) -> "Parameter":
        """A copy under a name of its own, ``<name>_deepcopy_N`` (paddle's): an optimizer may hold
        a model and its copy (an EMA), whose parameters must have distinct names."""
        new = super().__deepcopy__(memo)
        new.name = f"{self.name}_deepcopy_{next(_deepcopy_ids)}"
        return new


class ParamAttr:
    """Paddle's ParamAttr: the name, initializer and trainability of a parameter a layer creates,
    and what the parameter carries along for the optimizer: `optimize_attr['learning_rate']` (a
    factor on the optimizer's rate), `regularizer`, `do_model_average` and `need_clip` (whether
    gradient clipping applies to it). They are recorded on the parameter under paddle's names,
    where the optimizers (sharded ones included) and the clips read them; ``do_model_average`` is
    kept only.
    """

    def __init__(self, name: Optional[str] = None, initializer: Any = None, learning_rate: float = 1.0,
                 regularizer: Any = None, trainable: bool = True, do_model_average: bool = True,
                 need_clip: bool = True):
        if isinstance(learning_rate, bool) or not isinstance(learning_rate, (int, float)):
            raise TypeError(f"learning_rate must be a number, got {type(learning_rate).__name__}")
        self.name = name
        self.initializer = initializer
        self.learning_rate = float(learning_rate)
        self.regularizer = regularizer
        self.trainable = trainable
        self.do_model_average = do_model_average
        self.need_clip = need_clip

    def apply_to(self, param: "Parameter") -> "Parameter":
        """Give `param` the optimizer-facing attributes this ParamAttr holds."""
        param.optimize_attr = {"learning_rate": self.learning_rate}
        param.regularizer = self.regularizer
        param.do_model_average = self.do_model_average
        param.need_clip = self.need_clip
        return param

    @staticmethod
    def from_arg(attr: Any, arg_name: str) -> "ParamAttr":
        """ParamAttr from what layers accept as weight_attr/bias_attr (not False: no parameter)."""
        from pycoll.nn.initializer import Initializer
        if attr is None or attr is True:  # paddle takes True for the default attribute
            return ParamAttr()
        if isinstance(attr, ParamAttr):
            return attr
        if isinstance(attr, Initializer):
            return ParamAttr(initializer=attr)
        if isinstance(attr, str):
            return ParamAttr(name=attr)
        raise TypeError(f"{arg_name} must be None, True, False, a ParamAttr, an Initializer or a name, "
                        f"got {type(attr).__name__}")

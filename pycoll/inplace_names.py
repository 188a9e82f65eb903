"""paddle's top-level names of in-place functions that pycoll held as Tensor methods only
(``pycoll.cumsum_(x)`` is ``x.cumsum_()``): the same functions, from `pycoll.inplace_ops`."""
from pycoll._param_aliases import param_aliases
from pycoll.inplace_ops import masked_fill_, normal_  # importing it attaches the other forms to Tensor
from pycoll.tensor import Tensor

bitwise_and_ = Tensor.bitwise_and_
bitwise_not_ = Tensor.bitwise_not_
bitwise_or_ = Tensor.bitwise_or_ = param_aliases({"input": "x", "other": "y"})(Tensor.bitwise_or_)  # paddle's names
bitwise_xor_ = Tensor.bitwise_xor_
cumsum_ = Tensor.cumsum_
floor_divide_ = Tensor.floor_divide_
floor_mod_ = Tensor.floor_mod_
log_ = Tensor.log_
mod_ = Tensor.mod_
pow_ = Tensor.pow_
remainder_ = Tensor.remainder_
tril_ = Tensor.tril_
triu_ = Tensor.triu_

__all__ = ["bitwise_and_", "bitwise_not_", "bitwise_or_", "bitwise_xor_", "cumsum_", "floor_divide_", "floor_mod_",
           "log_", "masked_fill_", "mod_", "normal_", "pow_", "remainder_", "tril_", "triu_"]

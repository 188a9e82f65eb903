"""paddle's ``pp_utils.utils`` conversions between a stage's output dict and the tuple of tensors
paddle's pipeline sends: each tensor carries its key in a ``key`` attribute ("name" for a tensor,
"name i" for item i of a list), from which the receiving side rebuilds the dict."""
from __future__ import annotations

from typing import Any, Dict, Tuple

__all__ = ["convert_tensor_dict_to_tuple", "convert_tensor_tuple_to_dict", "dict_to_tuple_helper",
           "tuple_to_dict_helper"]


def convert_tensor_dict_to_tuple(output_tensor_dict: Dict[str, Any]) -> Tuple[Any, ...]:
    """The dict's tensors in order, each marked with its key (lists: "key i")."""
    out = []
    for key, value in output_tensor_dict.items():
        if isinstance(value, (list, tuple)):
            for i, tensor in enumerate(value):
                tensor.key = f"{key} {i}"
                out.append(tensor)
        else:
            value.key = key
            out.append(value)
    return tuple(out)


def convert_tensor_tuple_to_dict(input_tensor_tuple: Tuple[Any, ...]) -> Dict[str, Any]:
    """The dict back from marked tensors (the marks removed); "key i" items make a list."""
    out: Dict[str, Any] = {}
    for tensor in input_tensor_tuple:
        key = tensor.key
        if " " in key:
            out.setdefault(key.split(" ")[0], []).append(tensor)
        else:
            out[key] = tensor
        del tensor.key
    return out


def dict_to_tuple_helper(output_tensor: Any) -> Any:
    """A dict as marked tensors; a tensor or tuple as it is."""
    return convert_tensor_dict_to_tuple(output_tensor) if isinstance(output_tensor, dict) else output_tensor


def tuple_to_dict_helper(input_tensor: Any) -> Tuple[Any, bool]:
    """(the dict, True) for marked tensors, else (the input, False)."""
    first = input_tensor[0] if isinstance(input_tensor, tuple) else input_tensor
    if hasattr(first, "key"):
        return convert_tensor_tuple_to_dict(input_tensor if isinstance(input_tensor, tuple) else (input_tensor,)), True
    return input_tensor, False

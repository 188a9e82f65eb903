"""How a tensor's values print, in paddle 3.3.1's format, and `set_printoptions`.

`format_body` writes the values part of ``repr(tensor)`` (what follows the header line), so that
pycoll prints what paddle prints for the same values:

* floats: ``precision`` digits after the point (``0.50000000``), an integral value as ``3.``
  (also ``inf.``/``-inf.``), ``nan`` bare; with ``sci_mode`` every float as ``1.00000000e+00``;
  a float16/float32 value prints as its exact double (``0.1`` in float16 is ``0.09997559``);
* ints as ``str(int)``, bools as ``True``/``False``, complex as ``(1.00000000+2.00000000j)``;
* every item is left-justified to one width, the widest item of the summary view (see
  `_edge_view`); when some item is negative, non-negative items narrower than that width get one
  leading space instead of the sign, while an item already as wide as the width is not padded
  (so ``[-1.       , 2.50000000]`` is what paddle prints);
* above ``threshold`` elements every axis longer than ``2 * edgeitems`` shows its first and last
  ``edgeitems`` entries around ``...``;
* a 1-D row holds ``(linewidth - indent) // (width + 2)`` items a line (at least one); nested
  dimensions are separated by ``,`` and ``ndim - 1`` newlines and indented one column a level.

This module imports nothing of pycoll's: `pycoll.tensor` imports it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, List, Optional

import numpy as np

__all__ = ["format_body", "set_printoptions"]


@dataclass
class _PrintOptions:
    precision: int = 8
    threshold: int = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool = False


_options = _PrintOptions()


def set_printoptions(precision: Optional[int] = None, threshold: Optional[int] = None,
                     edgeitems: Optional[int] = None, sci_mode: Optional[bool] = None,
                     linewidth: Optional[int] = None) -> None:
    """paddle's ``set_printoptions``: change how tensors print from now on; None keeps a setting.

    Args:
        precision: digits after the decimal point of a float (start: 8).
        threshold: above this many elements a tensor prints summarised with ``...`` (start: 1000).
        edgeitems: entries kept at each end of a summarised axis (start: 3).
        sci_mode: print every float in scientific notation (start: False).
        linewidth: characters a line of a 1-D row aims at (start: 80).

    Raises:
        TypeError: a setting of the wrong type (ints for all but ``sci_mode``, a bool); nothing is
            changed then.
    """
    given = {"precision": precision, "threshold": threshold, "edgeitems": edgeitems,
             "linewidth": linewidth, "sci_mode": sci_mode}
    given = {name: value for name, value in given.items() if value is not None}
    for name, value in given.items():
        expected = bool if name == "sci_mode" else int
        if not isinstance(value, expected):
            raise TypeError(f"The type of '{name}' in set_printoptions must be {expected}, "
                            f"but received {type(value)}.")
    for name, value in given.items():
        setattr(_options, name, value)


def format_body(array: np.ndarray, indent: int = 7) -> str:
    """The values of a tensor as paddle prints them, e.g. ``[[1., 2.],\\n        [3., 4.]]``.

    Args:
        array: the tensor's values, a NumPy array (a CuPy array must be copied to the host first).
        indent: the column the body starts at: ``len(prefix) + 1`` for paddle's ``prefix(`` header,
            so 7 for ``Tensor(``. The continuation lines are indented from it; the first line is
            not, so the caller writes ``" " * indent + format_body(array, indent) + ")"``.
    """
    array = np.asarray(array)
    summarize = int(np.prod(array.shape)) > _options.threshold
    width, signed = _width_and_sign(_edge_view(array))
    return _format_nested(array, summarize, indent, width, signed)


def _edge_view(array: np.ndarray) -> np.ndarray:
    """The entries the common item width is measured on: along every axis longer than
    ``2 * edgeitems``, the first and last ``edgeitems`` only.

    Paddle measures on this view even when the tensor is not summarised, so a middle entry wider
    than the edges prints unpadded, wider than the rest; kept so that output matches.
    """
    if array.size == 0:
        return array.reshape(0)
    edge = _options.edgeitems
    for axis, length in enumerate(array.shape):
        if length > 2 * edge:
            # array[-0:] is the whole axis, so edgeitems=0 measures every entry, as paddle does
            kept = np.concatenate([np.arange(length)[:edge], np.arange(length)[-edge:]])
            array = np.take(array, kept, axis=axis)
    return array


def _width_and_sign(values: np.ndarray) -> tuple[int, bool]:
    """The widest item's length, and whether any item is negative."""
    width, signed = 0, False
    for value in values.ravel().tolist():
        signed = signed or _is_negative(value)
        width = max(width, len(_format_item(value)))
    return width, signed


def _is_negative(value: Any) -> bool:
    """``value < 0``; a complex number compares as NumPy orders it: by real, then imaginary part."""
    if isinstance(value, complex):
        return value.real < 0 or (value.real == 0 and value.imag < 0)
    return value < 0


def _format_item(value: Any) -> str:
    """One entry (a Python scalar from ``ndarray.tolist``), unpadded."""
    precision = _options.precision
    if isinstance(value, float):
        if _options.sci_mode:
            return f"{value:.{precision}e}"
        if math.isinf(value) or value.is_integer():
            return f"{value:.0f}."
        return f"{value:.{precision}f}"
    if isinstance(value, complex):
        style = "e" if _options.sci_mode else "f"
        sign = "+" if value.imag >= 0 else ""
        return f"({value.real:.{precision}{style}}{sign}{value.imag:.{precision}{style}}j)"
    return str(value)


def _pad(value: Any, width: int, signed: bool) -> str:
    """An entry padded to the common width; see the module docstring for paddle's sign rule."""
    text = _format_item(value)
    if len(text) >= width:
        return text
    if signed and not _is_negative(value):
        return " " + text.ljust(width - 1)
    return text.ljust(width)


def _format_nested(array: np.ndarray, summarize: bool, indent: int, width: int, signed: bool) -> str:
    """`array` (its first line starting at column `indent`) in paddle's nested-list layout."""
    if array.ndim == 0:
        return _pad(array.item(), width, signed)
    length, edge = array.shape[0], _options.edgeitems
    if summarize and length > 2 * edge:
        kept: List[Optional[int]] = [*range(edge), None, *range(length - edge, length)]
    else:
        kept = list(range(length))
    if array.ndim == 1:
        values = array.tolist()
        items = ["..." if i is None else _pad(values[i], width, signed) for i in kept]
        per_line = max(1, (_options.linewidth - indent) // (width + 2))
        lines = [", ".join(items[start:start + per_line]) for start in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    parts = ["..." if i is None else _format_nested(array[i], summarize, indent + 1, width, signed)
             for i in kept]
    return "[" + ("," + "\n" * (array.ndim - 1) + " " * (indent + 1)).join(parts) + "]"

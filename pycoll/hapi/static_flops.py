"""paddle.hapi.static_flops: paddle counts a static ``Program``'s operators here; pycoll runs eagerly
and has no static Program, so ``static_flops`` refuses by name and points at ``pycoll.flops``,
which counts a Layer's FLOPs by paddle's rules. ``Table`` is paddle's printed table (the one
``flops(..., print_detail=True)`` prints)."""
from __future__ import annotations

from typing import Any, List

from pycoll.hapi.flops import _table

__all__ = ["Table", "static_flops"]


def static_flops(program: Any, print_detail: bool = False) -> int:
    """Refused: ``program`` would be a paddle static Program, which pycoll does not have."""
    raise TypeError(f"static_flops: program must be a static Program, got {type(program).__name__}; pycoll runs "
                    f"eagerly and has no static Program: count a pycoll.nn.Layer with pycoll.flops(net, input_size)")


class Table:
    """Rows under ``table_heads``, printed as paddle prints them: centred cells between '|', ruled
    with '+---+' lines, each column as wide as its widest cell."""

    def __init__(self, table_heads: List[str]) -> None:
        if not isinstance(table_heads, (list, tuple)) or not table_heads:
            raise TypeError(f"Table: table_heads must be a non-empty list, got {table_heads!r}")
        self.table_heads = list(table_heads)
        self.col_num = len(self.table_heads)
        self.data: List[list] = []

    def add_row(self, row_str: List[Any]) -> None:
        if not isinstance(row_str, list) or len(row_str) != self.col_num:
            raise ValueError(f"Table.add_row: row_str must be a list of {self.col_num} cells (one per head), "
                             f"got {row_str!r}")
        self.data.append(row_str)

    def print_table(self) -> None:
        print(_table(self.table_heads, self.data))

"""Entry configurations of a parameter server's sparse embedding (paddle's ``ProbabilityEntry``,
``CountFilterEntry``, ``ShowClickEntry``): which feature ids earn a row of the table. pycoll has
no parameter server; these are the configuration objects, whose ``_to_attr()`` strings and
argument checks are paddle 3.3.1's (ValueError for a wrong type too, as paddle's raise), so code
that builds or checks them runs unchanged; one check is stricter: a NaN probability, which
paddle's comparisons let through, is refused."""
from __future__ import annotations


class EntryAttr:
    """The base of the entry configurations; ``_to_attr()`` is the string a table reads."""

    def __init__(self) -> None:
        self._name = None

    def _to_attr(self) -> str:
        raise NotImplementedError("EntryAttr is base class")


class ProbabilityEntry(EntryAttr):
    """An id gets a row with probability ``probability`` (a float in (0, 1)) when first seen."""

    def __init__(self, probability: float) -> None:
        super().__init__()
        if not isinstance(probability, float) or not 0 < probability < 1:
            raise ValueError(f"ProbabilityEntry: probability must be a float in (0,1), got {probability!r}")
        self._name = "probability_entry"
        self._probability = probability

    def _to_attr(self) -> str:
        return f"{self._name}:{self._probability}"


class CountFilterEntry(EntryAttr):
    """An id gets a row once it has been seen ``count_filter`` times (an int >= 0)."""

    def __init__(self, count_filter: int) -> None:
        super().__init__()
        if not isinstance(count_filter, int):
            raise ValueError(f"CountFilterEntry: count_filter must be a valid integer greater than 0, "
                             f"got {count_filter!r}")
        if count_filter < 0:
            raise ValueError(f"CountFilterEntry: count_filter must be a valid integer greater or equal "
                             f"than 0, got {count_filter}")
        self._name = "count_filter_entry"
        self._count_filter = count_filter

    def _to_attr(self) -> str:
        return f"{self._name}:{self._count_filter}"


class ShowClickEntry(EntryAttr):
    """Rows are kept by the show and click counts of the slots named ``show_name`` / ``click_name``."""

    def __init__(self, show_name: str, click_name: str) -> None:
        super().__init__()
        if not isinstance(show_name, str) or not isinstance(click_name, str):
            raise ValueError(f"ShowClickEntry: show_name click_name must be a str, got "
                             f"show_name={show_name!r}, click_name={click_name!r}")
        self._name = "show_click_entry"
        self._show_name = show_name
        self._click_name = click_name

    def _to_attr(self) -> str:
        return f"{self._name}:{self._show_name}:{self._click_name}"

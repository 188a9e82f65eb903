"""``dist.Strategy``: the settings ``to_static`` reads, with paddle's names and defaults.

    sharding        enable, stage (1/2/3), degree   ZeRO over the data-parallel ranks
                                                    (group_sharded_parallel's os / os_g / p_g_os)
    gradient_merge  enable, k_steps, avg            one update every k_steps steps (fleet's)
    fused_passes    enable, gemm_epilogue,          gemm_epilogue: pycoll's linear is always one
                    dropout_add                     matmul+bias op; dropout_add is not implemented
    pipeline        enable, schedule_mode,          not implemented: enable=True is refused
                    micro_batch_size, accumulate_steps
    amp             enable, dtype, level            not implemented: enable=True is refused
    full_graph      True                            pycoll always runs the whole step eagerly

Unlike paddle, a misspelt field fails, naming it, when set or given in ``config``.
"""
from __future__ import annotations

import copy
from typing import Any, Dict, Optional

_FIELDS: Dict[str, Dict[str, Any]] = {
    "sharding": {"enable": False, "stage": 1, "degree": 8},
    "gradient_merge": {"enable": False, "k_steps": 1, "avg": True},
    "fused_passes": {"enable": False, "gemm_epilogue": False, "dropout_add": False},
    "pipeline": {"enable": False, "schedule_mode": "1F1B", "micro_batch_size": 1, "accumulate_steps": 1},
    "amp": {"enable": False, "dtype": "float16", "level": "o1"},
}
_CHOICES = {("sharding", "stage"): (1, 2, 3), ("amp", "level"): ("o0", "o1", "o2"),
            ("amp", "dtype"): ("float16", "bfloat16"), ("pipeline", "schedule_mode"): ("FThenB", "1F1B", "VPP")}


class StrategyConfig:
    """One category of a Strategy (``strategy.sharding``, ...): fixed fields of fixed types."""

    def __init__(self, category: str, values: Optional[Dict[str, Any]] = None):
        object.__setattr__(self, "_category", category)
        object.__setattr__(self, "_values", dict(_FIELDS[category]))
        object.__setattr__(self, "_given", set())
        if values is not None:
            if not isinstance(values, dict):
                raise TypeError(f"Strategy: config[{category!r}] must be a dict, got {type(values).__name__}")
            for key, value in values.items():
                setattr(self, key, value)

    def __getattr__(self, name: str) -> Any:
        values = object.__getattribute__(self, "_values")
        if name in values:
            return values[name]
        raise AttributeError(f"strategy.{self._category} has no field {name!r}; its fields: "
                             f"{', '.join(values)}")

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in self._values:
            raise AttributeError(f"strategy.{self._category} has no field {name!r}; its fields: "
                                 f"{', '.join(self._values)}")
        default = _FIELDS[self._category][name]
        where = f"strategy.{self._category}.{name}"
        if isinstance(default, bool):
            if not isinstance(value, bool):
                raise TypeError(f"{where} must be True or False, got {value!r}")
        elif isinstance(default, int):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{where} must be an int >= 1, got {value!r}")
        choices = _CHOICES.get((self._category, name))
        if (self._category, name) == ("amp", "level") and isinstance(value, str):
            value = value.lower()  # paddle takes "O2" as "o2"
        if choices is not None and value not in choices:
            raise ValueError(f"{where} must be one of {list(choices)}, got {value!r}")
        self._values[name] = value
        self._given.add(name)

    def was_set(self, name: str) -> bool:
        """Whether ``name`` was given rather than left at its default."""
        return name in self._given

    def to_dict(self) -> Dict[str, Any]:
        return dict(self._values)

    def __deepcopy__(self, memo: dict) -> "StrategyConfig":
        new = StrategyConfig(self._category)
        new._values.update(copy.deepcopy(self._values, memo))
        new._given.update(self._given)
        return new

    def __repr__(self) -> str:
        return f"{self._category}{self._values}"


class Strategy:
    """paddle's ``dist.Strategy(config=None)``: ``config`` is a dict of categories, e.g.
    ``{"sharding": {"enable": True, "stage": 2}}`` (see the module's table)."""

    def __init__(self, config: Optional[Dict[str, Any]] = None):
        if config is not None and not isinstance(config, dict):
            raise ValueError(f"Strategy: config must be a dict or None, got {type(config).__name__}")
        config = dict(config or {})
        full_graph = config.pop("full_graph", True)
        unknown = sorted(set(config) - set(_FIELDS))
        if unknown:
            raise ValueError(f"Strategy: config has unknown categories {unknown}; known: "
                             f"{', '.join(_FIELDS)}, full_graph")
        if not isinstance(full_graph, bool):
            raise TypeError(f"Strategy: config['full_graph'] must be True or False, got {full_graph!r}")
        object.__setattr__(self, "_configs", {c: StrategyConfig(c, config.get(c)) for c in _FIELDS})
        object.__setattr__(self, "_full_graph", full_graph)

    @property
    def sharding(self) -> StrategyConfig:
        return self._configs["sharding"]

    @property
    def gradient_merge(self) -> StrategyConfig:
        return self._configs["gradient_merge"]

    @property
    def fused_passes(self) -> StrategyConfig:
        return self._configs["fused_passes"]

    @property
    def pipeline(self) -> StrategyConfig:
        return self._configs["pipeline"]

    @property
    def amp(self) -> StrategyConfig:
        return self._configs["amp"]

    @property
    def full_graph(self) -> bool:
        return self._full_graph

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Strategy has no settable field {name!r}; set the fields of its categories "
                             f"({', '.join(_FIELDS)}), e.g. strategy.sharding.enable = True")

    def refuse_unsupported(self) -> None:
        """NotImplementedError naming the first field asking for what pycoll does not do."""
        for field in ("pipeline.enable", "amp.enable", "fused_passes.dropout_add"):
            category, name = field.split(".")
            if getattr(self._configs[category], name):
                raise NotImplementedError(f"strategy.{field}=True: pycoll does not implement it; leave it "
                                          f"False")

    def __repr__(self) -> str:
        return f"Strategy({', '.join(repr(c) for c in self._configs.values())}, full_graph={self._full_graph})"

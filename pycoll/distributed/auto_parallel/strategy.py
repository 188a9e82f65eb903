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

The other fields of paddle 3.3.1's categories (``sharding.enable_overlap``, ``pipeline.pp_degree``,
``amp.init_loss_scaling``, ...) and its underscored ones (``_recompute``, ``_mp_optimization``,
``_dp_optimization``, ``_sp_optimization``) tune how paddle's static passes schedule, fuse and
overlap the same step: they are taken, type-checked, and change nothing in pycoll's results.
A field its category does not have (a misspelling: paddle's own docstring sets
``fused_passes.gemm_spilogue``) is kept and reads back, as paddle keeps it, and pycoll says once
that nothing reads it, naming the category's fields; reading a field never set fails, naming it.

The Strategy's own fields (paddle's "base" category, set as ``strategy.return_numpy = False`` or
given at the top of ``config``):

    return_numpy    True: a DistModel step returns NumPy arrays (the loss; predict's outputs,
                    each this rank's piece), as paddle's; False: pycoll Tensors
    seed            an int: the DistModel seeds pycoll, NumPy and ``random`` with seed + this
                    rank's data-parallel index when it is made (paddle's rule)
    auto_mode       "semi" only (the placements come from the user); paddle's planners refused
    reinit          paddle's debugging re-run of the startup program: True is refused
    gradient_scale, gradient_scale_using_allreduce_avg, use_cache, all_ranks, split_data
                    how paddle builds and runs its programs (3.3.1's PIR programs average the
                    gradients either way); taken, type-checked, no effect
"""
from __future__ import annotations

import copy
from typing import Any, Dict, Optional, Set, Tuple

from pycoll._logging import logger

_BASE: Dict[str, Any] = {"auto_mode": "semi", "gradient_scale": True, "gradient_scale_using_allreduce_avg": False,
                         "use_cache": True, "return_numpy": True, "all_ranks": False, "split_data": True,
                         "seed": None, "reinit": False}
_FIELDS: Dict[str, Dict[str, Any]] = {
    "sharding": {"enable": False, "stage": 1, "degree": 8, "enable_overlap": False, "param_comm_stream_num": 1,
                 "grad_comm_stream_num": 1, "param_bucket_size_numel": 1, "grad_bucket_size_numel": 1,
                 "enable_hierarchical_comm": False, "partition_algor": "greedy_even", "enable_tuning": False,
                 "tuning_range": [], "release_gradients": False, "comm_buffer_size_MB": 256,
                 "enable_tensor_fusion": False, "save_unbalanced_param": True},
    "gradient_merge": {"enable": False, "k_steps": 1, "avg": True},
    "fused_passes": {"enable": False, "gemm_epilogue": False, "dropout_add": False},
    "pipeline": {"enable": False, "schedule_mode": "1F1B", "pp_degree": 1, "vpp_degree": 1, "vpp_seg_method": "",
                 "micro_batch_size": 1, "accumulate_steps": 1, "generation_batch_size": 1,
                 "enable_send_recv_overlap": False, "job_schedule_profiler_start": -1,
                 "job_schedule_profiler_stop": -1, "program_runtimes": [61, 72, 71, 34, 3],
                 "memory_limit_times": -1, "split_backward": False, "auto_parallel_sync_shared_params": False},
    "amp": {"enable": False, "dtype": "float16", "level": "o1", "init_loss_scaling": 32768.0,
            "incr_every_n_steps": 1000, "decr_every_n_nan_or_inf": 2, "incr_ratio": 2.0, "decr_ratio": 0.8,
            "use_dynamic_loss_scaling": True, "custom_white_list": [], "custom_black_list": [],
            "custom_black_varnames": [], "use_fp16_guard": False, "use_bf16_guard": False,
            "use_master_grad": False, "use_promote": True},
    "recompute": {"enable": False, "checkpoints": [], "no_recompute_segments": [], "sr": 0,
                  "refined_ops_patterns": [], "enable_tuning": False},
    "mp_optimization": {"allreduce_matmul_grad_overlapping": False, "replace_with_c_embedding": False,
                        "replace_with_parallel_cross_entropy": False},
    "dp_optimization": {"enable": False, "fuse_all_reduce_ops": True, "fuse_grad_size_in_MB": 32,
                        "overlap_comm_cacl": True, "gradient_sync_after_accumulate": False},
    "sp_optimization": {"enable": True},
}
_said_unknown: Set[Tuple[str, str]] = set()  # (category, field) pairs warned of, once a process
_CHOICES = {("sharding", "stage"): (1, 2, 3), ("amp", "level"): ("o0", "o1", "o2"),
            ("amp", "dtype"): ("float16", "bfloat16"), ("pipeline", "schedule_mode"): ("FThenB", "1F1B", "VPP")}


def _defaults(category: str) -> Dict[str, Any]:
    return _BASE if category == "base" else _FIELDS[category]


class StrategyConfig:
    """One category of a Strategy (``strategy.sharding``, ...; "base": the Strategy's own fields):
    fixed fields of fixed types."""

    def __init__(self, category: str, values: Optional[Dict[str, Any]] = None):
        object.__setattr__(self, "_category", category)
        object.__setattr__(self, "_values", copy.deepcopy(_defaults(category)))  # lists of its own
        object.__setattr__(self, "_given", set())
        object.__setattr__(self, "_unknown", {})  # fields the category does not have, kept as paddle keeps them
        if values is not None:
            if not isinstance(values, dict):
                raise TypeError(f"Strategy: config[{category!r}] must be a dict, got {type(values).__name__}")
            for key, value in values.items():
                setattr(self, key, value)

    def __getattr__(self, name: str) -> Any:
        values = object.__getattribute__(self, "_values")
        if name in values:
            return values[name]
        unknown = object.__getattribute__(self, "_unknown")
        if name in unknown:
            return unknown[name]
        raise AttributeError(f"{self._prefix()[:-1]} has no field {name!r}; its fields: {', '.join(values)}")

    def _prefix(self) -> str:
        return "strategy." if self._category == "base" else f"strategy.{self._category}."

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in self._values:
            if (self._category, name) not in _said_unknown:
                _said_unknown.add((self._category, name))
                logger.warning(f"{self._prefix()[:-1]} has no field {name!r} (its fields: {', '.join(self._values)}): "
                               f"kept, but nothing reads it; check the spelling")
            self._unknown[name] = value
            return
        default = _defaults(self._category)[name]
        where = f"{self._prefix()}{name}"
        if default is None:  # seed
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise TypeError(f"{where} must be an int or None, got {value!r}")
        elif isinstance(default, bool):
            if not isinstance(value, bool):
                raise TypeError(f"{where} must be True or False, got {value!r}")
        elif isinstance(default, int):
            low = 1 if default >= 1 else None  # counts and sizes; -1 or 0 defaults mean "off"
            if isinstance(value, bool) or not isinstance(value, int) or (low is not None and value < low):
                raise ValueError(f"{where} must be an int{' >= 1' if low else ''}, got {value!r}")
        elif isinstance(default, float):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"{where} must be a number, got {value!r}")
            value = float(value)
        elif not isinstance(value, type(default)):
            raise TypeError(f"{where} must be a {type(default).__name__}, got {value!r}")
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

    def from_dict(self, config: Dict[str, Any]) -> None:
        """Set the fields ``config`` names (a misspelt one is kept, and said once)."""
        if not isinstance(config, dict):
            raise TypeError(f"{self._prefix()}from_dict: config must be a dict, got {type(config).__name__}")
        for key, value in config.items():
            setattr(self, key, value)

    def get(self, name: str, default: Any = None) -> Any:
        return self._values.get(name, default)

    def __deepcopy__(self, memo: dict) -> "StrategyConfig":
        new = StrategyConfig(self._category)
        new._values.update(copy.deepcopy(self._values, memo))
        new._given.update(self._given)
        new._unknown.update(copy.deepcopy(self._unknown, memo))
        return new

    def __repr__(self) -> str:
        return f"{self._category}{self._values}"


class Strategy:
    """paddle's ``dist.Strategy(config=None)``: ``config`` is a dict of categories, e.g.
    ``{"sharding": {"enable": True, "stage": 2}}``, and of the Strategy's own fields, e.g.
    ``{"return_numpy": False}`` (see the module's text)."""

    def __init__(self, config: Optional[Dict[str, Any]] = None):
        if config is not None and not isinstance(config, dict):
            raise ValueError(f"Strategy: config must be a dict or None, got {type(config).__name__}")
        config = dict(config or {})
        full_graph = config.pop("full_graph", True)
        own = {key: config.pop(key) for key in list(config) if key in _BASE}
        unknown = sorted(set(config) - set(_FIELDS))
        if unknown:
            raise ValueError(f"Strategy: config has unknown keys {unknown}; known: the categories "
                             f"{', '.join(_FIELDS)}, full_graph and the fields {', '.join(_BASE)}")
        if not isinstance(full_graph, bool):
            raise TypeError(f"Strategy: config['full_graph'] must be True or False, got {full_graph!r}")
        object.__setattr__(self, "_own", StrategyConfig("base", own))
        object.__setattr__(self, "_configs", {c: StrategyConfig(c, config.get(c)) for c in _FIELDS})
        object.__setattr__(self, "_full_graph", full_graph)

    def __getattr__(self, name: str) -> Any:
        if name in _BASE:
            return getattr(object.__getattribute__(self, "_own"), name)
        raise AttributeError(f"Strategy has no field {name!r}; its fields: {', '.join(_BASE)}, and the "
                             f"categories {', '.join(_FIELDS)}")

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

    # paddle's "template interface" categories, underscored there too (see the module's text)
    @property
    def _recompute(self) -> StrategyConfig:
        return self._configs["recompute"]

    @property
    def _mp_optimization(self) -> StrategyConfig:
        return self._configs["mp_optimization"]

    @property
    def _dp_optimization(self) -> StrategyConfig:
        return self._configs["dp_optimization"]

    @property
    def _sp_optimization(self) -> StrategyConfig:
        return self._configs["sp_optimization"]

    @property
    def full_graph(self) -> bool:
        return self._full_graph

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _BASE:
            setattr(self._own, name, value)
            return
        raise AttributeError(f"Strategy has no settable field {name!r}; its fields: {', '.join(_BASE)}; or "
                             f"set the fields of its categories ({', '.join(_FIELDS)}), e.g. "
                             f"strategy.sharding.enable = True")

    def to_dict(self) -> Dict[str, Any]:
        """The fields and each category's fields, under paddle's keys (``"_sharding"``, ...)."""
        return {**self._own.to_dict(), **{f"_{c}": config.to_dict() for c, config in self._configs.items()}}

    def from_dict(self, config: Dict[str, Any]) -> None:
        """Set what ``config`` names: the Strategy's fields, and categories by name or by
        ``to_dict``'s key (``"sharding"`` or ``"_sharding"``)."""
        if not isinstance(config, dict):
            raise TypeError(f"Strategy.from_dict: config must be a dict, got {type(config).__name__}")
        for key, value in config.items():
            category = key[1:] if key.startswith("_") else key
            if category in _FIELDS:
                self._configs[category].from_dict(value)
            else:
                setattr(self, key, value)

    def get(self, name: str, default: Any = None) -> Any:
        return self.to_dict().get(name, default)

    def refuse_unsupported(self) -> None:
        """NotImplementedError naming the first field asking for what pycoll does not do."""
        if self.auto_mode != "semi":
            raise NotImplementedError(f"strategy.auto_mode={self.auto_mode!r}: pycoll takes the placements from "
                                      f"the user (\"semi\"); it has no planner that chooses them")
        if self.reinit:
            raise NotImplementedError("strategy.reinit=True (re-running paddle's startup program): pycoll's "
                                      "parameters are initialised when the layer is made; leave it False")
        for field in ("pipeline.enable", "amp.enable", "fused_passes.dropout_add"):
            category, name = field.split(".")
            if getattr(self._configs[category], name):
                raise NotImplementedError(f"strategy.{field}=True: pycoll does not implement it; leave it "
                                          f"False")

    def __repr__(self) -> str:
        return (f"Strategy({self._own._values}, {', '.join(repr(c) for c in self._configs.values())}, "
                f"full_graph={self._full_graph})")

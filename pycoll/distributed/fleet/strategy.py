"""``DistributedStrategy``: the settings of a fleet job, typed as paddle's protobuf is, so that a
misspelt field fails instead of being ignored.

Besides the fields fleet acts on, it holds paddle's other settings (names and defaults of paddle
3.3.1's protobuf) so that scripts written for paddle run: most are static-graph or
parameter-server settings that paddle's dygraph fleet does not read either (``recompute``: use
``fleet.utils.recompute``; ``lamb``, ``dgc``...). Setting one to something other than its default
logs, once, that pycoll keeps it without acting on it. ``amp`` is read as paddle's dygraph fleet
reads it: ``fleet.distributed_model`` decorates the model at level O2 when ``amp_configs`` asks
for pure float16 or bfloat16.
"""
from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any, Dict, Set

from pycoll._atomic_files import write_whole
from pycoll._logging import logger
from pycoll.distributed.fleet import strategy_text
from pycoll.distributed.fleet.strategy_configs import HYBRID_CONFIGS, Configs, UnknownKey, check_type

GIVEN = "sharding_configs_degree_given"  # pycoll's JSON files' record of _sharding_degree_given
AXES = ["dp", "pp", "sharding", "sep", "cp", "mp"]  # paddle's default hybrid_parallel_order
# degrees paddle 3.3.1 takes that pycoll has not built: 1 is accepted, more is refused by fleet.init
UNBUILT_DEGREES = {"cp_degree": "context parallelism",
                   "ep_degree": "expert parallelism", "moe_sharding_degree": "MoE sharding",
                   "cp_sharding_degree": "context-parallel sharding"}
_CONFIGS = {  # the dict-valued fields fleet acts on (besides hybrid_configs), their keys and defaults
    "gradient_merge_configs": {"k_steps": 1, "avg": True},
    "sharding_configs": {"sharding_degree": 8, "stage": 1, "optimize_offload": False,
                         # paddle's static-graph sharding keys, kept (see _kept)
                         "sharding_segment_strategy": "segment_broadcast_MB", "segment_broadcast_MB": 32.0,
                         "segment_anchors": [], "mp_degree": 1, "dp_degree": 1, "hybrid_dp": False,
                         "gradient_merge_acc_step": 1, "pp_allreduce_in_optimize": False, "pp_degree": 1,
                         "optimize_cast": False, "_dp_as_optimizer_sharding": False, "enable_tuning": False,
                         "use_calc_stream": False},
    "tensor_parallel_configs": {"tensor_parallel_degree": 1, "tensor_init_seed": -1},
    # the pipeline's micro-batches; the other keys are paddle's, kept (pycoll always sends shapes)
    "pipeline_configs": {"micro_batch_size": 1, "accumulate_steps": 1, "schedule_mode": "1F1B",
                         "p2p_cache_shape": True, "enable_partial_send_recv": True},
    "amp_configs": {"init_loss_scaling": 32768.0, "incr_every_n_steps": 1000, "decr_every_n_nan_or_inf": 2,
                    "incr_ratio": 2.0, "decr_ratio": 0.8, "use_dynamic_loss_scaling": True,
                    "custom_white_list": [], "custom_black_list": [], "custom_black_varnames": [],
                    "use_pure_fp16": False, "use_fp16_guard": True, "use_optimizer_fp16": False,
                    "use_pure_bf16": False},
}
_FLAGS = {"fuse_all_reduce_ops": True, "fuse_grad_size_in_MB": 32, "last_comm_group_size_MB": 1.0,
          "gradient_merge": False, "sharding": False, "find_unused_parameters": False, "amp": False,
          "hybrid_parallel_order": AXES,
          "sync_param_name": ["embedding", "layer_norm", ".b_"]}  # mp_configs' sync_param_name, as paddle keeps it
_KEPT_FLAGS = {  # paddle's, kept and not acted on
    "recompute": False, "pipeline": False, "sync_batch_norm": False, "nccl_comm_num": 1,
    "sync_nccl_allreduce": True, "without_graph_optimization": True, "a_sync": True, "lamb": False, "lars": False,
    "dgc": False, "localsgd": False, "adaptive_localsgd": False, "heter_ccl_mode": False, "fp16_allreduce": False,
    "use_hierarchical_allreduce": False, "hierarchical_allreduce_inter_nranks": 1, "fuse_grad_size_in_num": 8,
    "fuse_grad_merge": False, "tensor_parallel": False, "semi_auto": False, "auto": False, "elastic": False,
    "split_data": True, "cudnn_exhaustive_search": False, "conv_workspace_size_limit": 512,
    "cudnn_batchnorm_spatial_persistent": False, "qat": False, "asp": False, "adam_d2sum": False,
    "auto_search": False, "_calc_comm_same_stream": False}
_KEPT_CONFIGS = {
    "recompute_configs": {"checkpoints": [], "enable_offload": False, "checkpoint_shape": [],
                          "enable_tuning": False, "refined_ops_patterns": []},
    "localsgd_configs": {"k_steps": 1, "begin_step": 1},
    "adaptive_localsgd_configs": {"init_k_steps": 1, "begin_step": 1},
    "dgc_configs": {"rampup_begin_step": 0, "rampup_step": 1, "sparsity": []},
    "lamb_configs": {"lamb_weight_decay": 0.01, "exclude_from_weight_decay": []},
    "lars_configs": {"lars_coeff": 0.001, "lars_weight_decay": 0.0005, "epsilon": 0.0,
                     "exclude_from_weight_decay": []},
    "gradient_scale_configs": {"scale_strategy": "avg", "scale_gradient": False},
    "qat_configs": {"channel_wise_abs_max": True, "weight_bits": 8, "activation_bits": 8, "not_quant_pattern": [],
                    "algo": ""},
    # the parameter-server job's (pycoll runs collective jobs), kept so that its scripts' settings read back
    "a_sync_configs": {"k_steps": -1, "max_merge_var_num": 1, "send_queue_size": 16, "independent_recv_thread": False,
                       "min_send_grad_num_before_recv": 1, "thread_pool_size": 1, "send_wait_times": 1,
                       "runtime_split_send_recv": False, "launch_barrier": True, "heter_worker_device_guard": "cpu",
                       "lr_decay_steps": 10, "use_ps_gpu": 0, "use_gpu_graph": 0},
    "trainer_desc_configs": {"dump_fields_path": "", "dump_fields": [], "dump_param": [], "stat_var_names": [],
                             "trainer": "", "device_worker": "", "local_sparse": [], "remote_sparse": []},
    "fs_client_param": {"uri": "", "user": "", "passwd": "", "hadoop_bin": ""},
}
_ALL_CONFIGS = {**_CONFIGS, **_KEPT_CONFIGS}
_PROTO_NAMES = {"_calc_comm_same_stream": "calc_comm_same_stream"}  # pycoll's name: paddle's protobuf's
_PYCOLL_NAMES = {proto: name for name, proto in _PROTO_NAMES.items()}
_OUTSIDE_PROTO = ("hybrid_parallel_order", "sync_param_name")  # paddle's attributes beside its protobuf
_said: Set[str] = set()


class DistributedStrategy:
    """Fields a dygraph collective job reads: ``hybrid_configs`` (the degrees ``dp_degree`` —
    -1, paddle's default, is what the others leave —, ``mp_degree``, ``pp_degree``,
    ``sharding_degree``, ``sep_degree``; paddle's other degrees, ``cp_degree``, ``ep_degree``,
    ``moe_sharding_degree``, ``cp_sharding_degree``, are taken at 1; its nested ``mp_configs``,
    ``pp_configs``... are ``Configs``, read by attribute as paddle's messages are; its ``order``
    goes to ``hybrid_parallel_order``), ``fuse_all_reduce_ops``, ``fuse_grad_size_in_MB`` and
    ``last_comm_group_size_MB`` (DataParallel's bucket sizes), ``find_unused_parameters``,
    ``gradient_merge`` + ``gradient_merge_configs`` (``k_steps``, ``avg``), ``sharding`` +
    ``sharding_configs`` (``sharding_degree``, ``stage`` 1/2/3 = group_sharded_parallel's levels
    os/os_g/p_g_os, ``optimize_offload``), ``amp`` + ``amp_configs`` (``use_pure_fp16`` /
    ``use_pure_bf16``), ``tensor_parallel_configs["tensor_init_seed"]``
    (``model_parallel_random_seed``'s seed at ``fleet.init``), ``pipeline_configs``
    (``micro_batch_size``, ``accumulate_steps``), and paddle's other fields, kept (see the module
    docstring). Setting a dict field updates the keys given (paddle's behaviour); an unknown field
    or key raises, naming it."""

    def __init__(self) -> None:
        values = copy.deepcopy({**_FLAGS, **_KEPT_FLAGS, **_ALL_CONFIGS})
        values["hybrid_configs"] = Configs("DistributedStrategy.hybrid_configs", HYBRID_CONFIGS)
        object.__setattr__(self, "_values", values)
        # whether the user gave sharding_configs a sharding_degree (its default, 8, is paddle's
        # static-graph one: a dygraph job of 2 ranks asking for sharding=True must not get it)
        object.__setattr__(self, "_sharding_degree_given", False)

    def __getattr__(self, name: str) -> Any:
        values = object.__getattribute__(self, "_values")
        if name in values:
            value = values[name]
            return dict(value) if isinstance(value, Mapping) else value  # nested Configs stay live, as in paddle
        raise AttributeError(f"DistributedStrategy has no field {name!r}; fields: {', '.join(sorted(values))}")

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "hybrid_configs":
            self._set_hybrid(value)
        elif name in _ALL_CONFIGS:
            if not isinstance(value, Mapping):
                raise TypeError(f"DistributedStrategy.{name} must be a dict, got {type(value).__name__}")
            unknown = sorted(set(value) - set(_ALL_CONFIGS[name]))
            if unknown:
                raise UnknownKey(f"DistributedStrategy.{name} has no key {unknown[0]!r}; keys: "
                                     f"{', '.join(sorted(_ALL_CONFIGS[name]))}")
            value = {key: check_type(f"DistributedStrategy.{name}[{key!r}]", _ALL_CONFIGS[name][key], v)
                     for key, v in value.items()}  # paddle's protobuf refuses another type at once
            if name in _KEPT_CONFIGS and any(value[k] != _KEPT_CONFIGS[name][k] for k in value):
                _kept(name)
            if name == "sharding_configs" and "sharding_degree" in value:
                object.__setattr__(self, "_sharding_degree_given", True)
            self._values[name].update(value)
        elif name in _FLAGS or name in _KEPT_FLAGS:
            default = _FLAGS.get(name, _KEPT_FLAGS.get(name))
            # a number for a number (pycoll's leniency: bucket sizes may be fractions of a MB)
            value = check_type(f"DistributedStrategy.{name}", default, value, exact_int=False)
            if name in _KEPT_FLAGS and value != default:
                _kept(name)
            self._values[name] = value
        else:
            raise AttributeError(f"DistributedStrategy has no field {name!r}; fields: "
                                 f"{', '.join(sorted(self._values))}")

    def _set_hybrid(self, configs: Any) -> None:
        """paddle's setter: ``order`` becomes ``hybrid_parallel_order``, ``mp_configs``'
        ``sync_param_name`` becomes ``sync_param_name``, the rest updates the keys given."""
        if not isinstance(configs, Mapping):
            raise TypeError(f"DistributedStrategy.hybrid_configs must be a dict, got {type(configs).__name__}")
        configs = dict(configs)
        if "order" in configs:
            self.hybrid_parallel_order = configs.pop("order")
        mp_configs = configs.get("mp_configs")
        if isinstance(mp_configs, Mapping) and "sync_param_name" in mp_configs:
            configs["mp_configs"] = dict(mp_configs)
            self.sync_param_name = configs["mp_configs"].pop("sync_param_name")
        self._values["hybrid_configs"].update(configs)

    def degrees(self) -> Dict[str, int]:
        """``hybrid_configs``' degrees; the sharding degree comes from ``sharding_configs`` when
        ``sharding`` is on, ``sharding_configs`` was given a ``sharding_degree`` and
        ``hybrid_configs`` leaves it at 1 (paddle's two ways to ask; paddle's dygraph fleet reads
        only hybrid_configs, so ``sharding=True`` alone changes nothing, as there)."""
        hybrid = self._values["hybrid_configs"]
        degrees = {key: value for key, value in hybrid.items() if key.endswith("_degree")}
        if self._values["sharding"] and self._sharding_degree_given and degrees["sharding_degree"] == 1:
            degrees["sharding_degree"] = self._values["sharding_configs"]["sharding_degree"]
        return degrees

    def check_axis_order(self) -> None:
        """ValueError unless ``hybrid_parallel_order`` names each of paddle's axes (dp, pp,
        sharding, sep, cp, mp; cp may be left out, as paddle's documented five-axis order does)
        once; the ranks are laid out in that order, the last varying fastest."""
        order = list(self._values["hybrid_parallel_order"])
        if sorted(order) not in (sorted(AXES), sorted(a for a in AXES if a != "cp")):
            raise ValueError(f"DistributedStrategy.hybrid_configs order={order}; it must name each of "
                             f"{AXES} once (cp may be left out)")

    def save_to_prototxt(self, output: str) -> None:
        """Write the fields that differ from their defaults to ``output`` in protobuf's text
        format, as paddle's does (``strategy_text``: either loads the other's file), whole:
        ranks that save and load the same path at once (paddle's example, run on every rank)
        never read half a file."""
        tree, defaults = self._proto_tree(), DistributedStrategy()._proto_tree()
        always = {"sharding_configs": {"sharding_degree": True}} if self._sharding_degree_given else {}
        extras = {name: self._values[name] for name in _OUTSIDE_PROTO if self._values[name] != _FLAGS[name]}
        text = strategy_text.dump(tree, defaults, always, extras)
        write_whole(output, lambda f: f.write(text))

    def _proto_tree(self) -> Dict[str, Any]:
        """The fields as plain values, under paddle's protobuf names."""
        return {_PROTO_NAMES.get(name, name): value.to_dict() if isinstance(value, Configs) else
                dict(value) if isinstance(value, Mapping) else value
                for name, value in self._values.items() if name not in _OUTSIDE_PROTO}

    def load_from_prototxt(self, pb_file: str) -> None:
        """Set the fields of ``pb_file``, a file paddle's or pycoll's ``save_to_prototxt`` wrote
        (protobuf's text format; pycoll's older JSON is read too), each checked as when set by
        hand. Fields of paddle's protobuf that pycoll does not keep (parameter-server tables,
        ``build_strategy``) are skipped, said in a warning."""
        with open(pb_file) as f:
            text = f.read()
        if text.lstrip().startswith("{"):  # pycoll's files before it wrote protobuf's text
            values = json.loads(text)
            given = bool(values.pop(GIVEN, False))
            for name, value in values.items():
                setattr(self, name, value)
            object.__setattr__(self, "_sharding_degree_given", given)
            return
        fields, extras = strategy_text.parse(text, f"load_from_prototxt({pb_file!r})")
        unknown: Set[str] = set()
        values = strategy_text.typed(fields, self._proto_tree(), "", unknown)
        if unknown:
            logger.warning("DistributedStrategy.load_from_prototxt(%r): pycoll keeps no field %s; skipped",
                           pb_file, ", ".join(sorted(unknown)))
        for name, value in values.items():
            setattr(self, _PYCOLL_NAMES.get(name, name), value)
        for name, value in extras.items():
            setattr(self, name, value)

    def __repr__(self) -> str:
        return f"DistributedStrategy({self._values})"


def _kept(name: str) -> None:
    if name not in _said:
        _said.add(name)
        logger.warning("DistributedStrategy.%s: pycoll keeps this setting but does not act on it (paddle's "
                       "dygraph fleet reads it only in static graphs or parameter-server mode)", name)

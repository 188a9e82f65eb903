"""paddle's pipeline model: ``PipelineLayer``, which cuts a list of layer descriptions
(``layer_descs``: ``LayerDesc``, ``SharedLayerDesc``, kept importable from here as in paddle) into
stages and builds only this rank's stage.

As in paddle, each described layer is built from the random generator seeded with ``1234 +`` its
index in the list (the generators in use before come back afterwards), so a layer's initial
weights do not depend on how the list is cut. A shared layer is built on every stage that uses
it; its shared weights then start from the first such stage's (a broadcast over a group of
those stages), and ``allreduce_shared_weight_gradients`` sums their gradients over that group
after each batch, so the copies stay equal.
"""
from __future__ import annotations

import functools
import glob
import os
import re
from collections import OrderedDict
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

import pycoll.distributed as dist
from pycoll._graph import no_grad
from pycoll._logging import logger
from pycoll.distributed.fleet.meta_parallel.layer_descs import LayerDesc, LocalSharedLayerDesc, SharedLayerDesc
from pycoll.distributed.fleet.recompute import recompute
from pycoll.distributed.fleet.topology import CommunicateTopology
from pycoll.nn import Layer, LayerDict
from pycoll.parallel import get_rng_state_tracker
from pycoll.random import drawing_from
from pycoll.serialization import load, save
from pycoll.tensor import Tensor

BASE_SEED = 1234  # paddle's: layer i is built from seed 1234 + i


def _name_of(desc: Any) -> Optional[str]:
    """The class or function name ``seg_method="layer:..."`` matches."""
    if isinstance(desc, LayerDesc):
        return desc.layer_func.__name__
    if isinstance(desc, Layer):
        return type(desc).__name__
    return getattr(desc, "__name__", None)


def segment_layers(descs: Sequence[Any], num_parts: int, method: Union[str, List[int]] = "uniform",
                   parts_name: str = "num_stages") -> List[int]:
    """paddle's cut of ``descs`` into ``num_parts`` stages: the boundaries, ``num_parts + 1`` of
    them from 0 to ``len(descs)``. ``"uniform"``: equal counts, the last stages taking one more
    where it does not divide; ``"layer:Name"``: equal counts of the items whose name matches the
    regular expression ``Name`` (case-insensitive), each stage ending after its last one; a list
    gives the boundaries (without the last, or with it)."""
    n = len(descs)
    if n < num_parts:
        raise ValueError(f"PipelineLayer: {n} layers cannot fill {parts_name}={num_parts} parts")
    if isinstance(method, list):
        bounds = list(method)
        if bounds[:1] != [0] or any(not isinstance(b, int) or not 0 <= b <= n for b in bounds) \
                or len(bounds) not in (num_parts, num_parts + 1):
            raise ValueError(f"PipelineLayer: seg_method={method}; a list needs {num_parts} or {num_parts + 1} "
                             f"boundaries from 0 up to {n}")
        return bounds + [n] if len(bounds) == num_parts else bounds
    if method == "uniform":
        size, extra = divmod(n, num_parts)
        bounds = [0]
        for i in range(1, num_parts):
            bounds.append(bounds[-1] + size + (1 if i > num_parts - extra else 0))
        return bounds + [n]
    if isinstance(method, str) and method.startswith("layer:"):
        pattern = re.compile(method.split(":", 1)[1], re.IGNORECASE)
        marked = [i for i, d in enumerate(descs) if _name_of(d) is not None and pattern.search(_name_of(d))]
        if not marked or len(marked) % num_parts:
            raise ValueError(f"PipelineLayer: seg_method={method!r} matches {len(marked)} layers; it must match "
                             f"a positive multiple of {parts_name}={num_parts}")
        per = len(marked) // num_parts
        return [0] + [marked[per * k - 1] + 1 for k in range(1, num_parts)] + [n]
    raise ValueError(f"PipelineLayer: seg_method={method!r}; use 'uniform', 'layer:ClassName' or a list of boundaries")


class PipelineLayerChunk(Layer):
    """One chunk of an interleaved stage (paddle's): its items in ``run_function``, its layers
    as sublayers named by their place in it. ``PipelineLayer.forward(x, chunk_id)`` runs it."""

    def __init__(self) -> None:
        super().__init__()
        self.run_function: List[Callable[..., Any]] = []

    def append(self, item: Callable[..., Any]) -> None:
        if isinstance(item, Layer):
            self.add_sublayer(str(len(self.run_function)), item)
        self.run_function.append(item)

    def get_run_function(self) -> List[Callable[..., Any]]:
        return self.run_function

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("PipelineLayerChunk: run a chunk through PipelineLayer.forward(x, chunk_id=...), "
                           "which applies recompute_interval")


class PipelineLayer(Layer):
    """The stages of a model given as a list of ``LayerDesc``, ``SharedLayerDesc``, built layers
    and plain callables (a function or lambda between layers); this rank builds and runs its
    stage's part. ``topology`` (fleet's ``hcg.topology()``) or ``num_stages`` (then the world
    is ``world / num_stages`` data-parallel copies of a pipeline) gives the stages; ``loss_fn``
    (one, or a list) runs on the last stage's output and the labels. ``recompute_interval``: run
    every that many items under ``fleet.utils.recompute``. Dualpipe and CUDA-graph schedules
    are not built. With ``num_virtual_pipeline_stages`` v > 1 (``seg_method``
    must then be ``"layer:..."``, as in paddle) the list is cut into ``num_stages * v`` parts and
    part ``c * num_stages + stage`` is this stage's chunk ``c`` (a ``PipelineLayerChunk``,
    a sublayer named by its first item's index, its layers named by their place in it); fleet
    then runs it as a ``PipelineParallelWithInterleave``."""

    def __init__(self, layers: Sequence[Any], num_stages: Optional[int] = None,
                 topology: Optional[CommunicateTopology] = None, loss_fn: Any = None,
                 seg_method: Union[str, List[int]] = "uniform", recompute_interval: int = 0,
                 recompute_ctx: Optional[Dict[str, Any]] = None, num_virtual_pipeline_stages: Optional[int] = None,
                 use_cudagraph: bool = False, use_dualpipev: bool = False):
        super().__init__()
        if num_stages is None and topology is None:
            raise ValueError("PipelineLayer: give num_stages or topology")
        for name, value in (("use_cudagraph", use_cudagraph), ("use_dualpipev", use_dualpipev)):
            if value is not False:
                raise ValueError(f"PipelineLayer: {name}={value!r}: pycoll has no CUDA-graph or dualpipe "
                                 f"schedule; leave {name} at False")
        if not isinstance(layers, (list, tuple)):
            raise TypeError(f"PipelineLayer: layers must be a list of LayerDesc, layers and callables, got "
                            f"{type(layers).__name__}")
        losses = loss_fn if isinstance(loss_fn, list) else [loss_fn]
        if any(fn is not None and not callable(fn) for fn in losses):
            raise TypeError(f"PipelineLayer: loss_fn must be a callable (a Layer, a function), a list of them or "
                            f"None, got {loss_fn!r}")
        layers = list(layers)
        local = [i for i, d in enumerate(layers) if isinstance(d, LocalSharedLayerDesc)]
        if local:
            raise ValueError(f"PipelineLayer: layers{local} are LocalSharedLayerDesc, which only the DualPipeV "
                             f"schedule runs (paddle: 'Only dualpipev is supported to use LocalSharedLayerDesc "
                             f"yet'); pycoll has no DualPipeV: use SharedLayerDesc")
        virtual = 1 if num_virtual_pipeline_stages is None else num_virtual_pipeline_stages
        if isinstance(virtual, bool) or not isinstance(virtual, int) or virtual < 1:
            raise ValueError(f"PipelineLayer: num_virtual_pipeline_stages={num_virtual_pipeline_stages!r}; it must "
                             f"be None or an int >= 1")
        if virtual > 1 and not (isinstance(seg_method, str) and seg_method.startswith("layer:")):
            raise ValueError(f"PipelineLayer: seg_method={seg_method!r} with num_virtual_pipeline_stages={virtual}; "
                             f"the interleaved schedule needs seg_method='layer:ClassName' (as paddle's)")
        if isinstance(recompute_interval, bool) or not isinstance(recompute_interval, int) or recompute_interval < 0:
            raise ValueError(f"PipelineLayer: recompute_interval={recompute_interval!r}; it must be an int >= 0")
        world, self.global_rank = dist.get_world_size(), dist.get_rank()
        if topology is None:
            if not isinstance(num_stages, int) or num_stages < 1 or world % num_stages:
                raise ValueError(f"PipelineLayer: num_stages={num_stages!r} must divide the world size ({world})")
            topology = CommunicateTopology(["data", "pipe", "model"], [world // num_stages, num_stages, 1])
        elif num_stages is not None and num_stages != topology.get_dim("pipe"):
            raise ValueError(f"PipelineLayer: num_stages={num_stages}, but the topology has "
                             f"{topology.get_dim('pipe')} pipe stages")
        self._topo = topology
        self._num_stages = topology.get_dim("pipe")
        self._stage_id = topology.get_coord(self.global_rank).pipe
        self._loss_fn = losses
        self._recompute_interval = recompute_interval
        self.recompute_ctx = recompute_ctx
        self._num_virtual_pipeline_stages = virtual
        self._layers_desc = list(layers)
        self._num_layers = len(self._layers_desc)
        self.shared_layers = LayerDict()
        self.segment_parts = segment_layers(self._layers_desc, self._num_stages * virtual, seg_method,
                                            "num_stages x num_virtual_pipeline_stages" if virtual > 1 else "num_stages")
        # paddle's: part c * num_stages + stage is this stage's chunk c
        parts = range(self._stage_id, self._num_stages * virtual, self._num_stages)
        self._start_poss = [self.segment_parts[part] for part in parts]
        self._end_poss = [self.segment_parts[part + 1] for part in parts]
        logger.info("PipelineLayer: stage %d of %d holds layers %s", self._stage_id, self._num_stages,
                    ", ".join(f"{a}..{b - 1}" for a, b in zip(self._start_poss, self._end_poss)))
        self._model_chunks: List[PipelineLayerChunk] = []
        if virtual == 1:
            self._start_pos, self._end_pos = self._start_poss[0], self._end_poss[0]
            self.run_function: List[Callable[..., Any]] = []
            self._build_layer()
        else:
            self._build_chunked_layer()
        self.shared_comm = self._construct_shared_comm()
        self._synchronize_shared_weights()

    # ---- building ---------------------------------------------------------------------------
    def _build_layer(self) -> None:
        self.run_function = self._build_items(self._start_pos, self._end_pos, None)

    def _build_chunked_layer(self) -> None:
        """paddle's interleaved layout: each chunk a sublayer named by its first item's index."""
        for start, end in zip(self._start_poss, self._end_poss):
            chunk = PipelineLayerChunk()
            self._build_items(start, end, chunk)
            self._model_chunks.append(chunk)
            self.add_sublayer(str(start), chunk)

    def _build_items(self, start: int, end: int, chunk: Optional["PipelineLayerChunk"]) -> List[Callable[..., Any]]:
        """Items ``start:end`` of the list, built; registered as sublayers of ``chunk`` (by their
        place in it), or without one of this layer (by their index in the list)."""
        tracker = get_rng_state_tracker()
        saved = tracker.get_states_tracker()
        items: List[Callable[..., Any]] = chunk.run_function if chunk is not None else []
        for index in range(start, end):
            desc = self._layers_desc[index]
            with drawing_from(np.random.default_rng(BASE_SEED + index)):
                if isinstance(desc, SharedLayerDesc):
                    if desc.layer_name not in self.shared_layers:
                        self.shared_layers[desc.layer_name] = desc.build_layer()
                    layer = self.shared_layers[desc.layer_name]
                    if desc.forward_func is None:
                        if chunk is not None:
                            chunk.append(layer)
                        else:
                            items.append(layer)
                    else:
                        if chunk is not None:  # paddle's: the chunk's parameters include the tied layer's
                            chunk.add_sublayer(desc.layer_name, layer)
                        items.append(functools.partial(desc.forward_func, layer))
                    continue
                layer = desc.build_layer() if isinstance(desc, LayerDesc) else desc
            if not isinstance(layer, Layer) and not callable(layer):
                raise TypeError(f"PipelineLayer: layers[{index}] is {type(layer).__name__}; give a LayerDesc, "
                                f"a SharedLayerDesc, a Layer or a callable")
            if chunk is not None:
                chunk.append(layer)
                continue
            if isinstance(layer, Layer):
                self.add_sublayer(str(index), layer)
            items.append(layer)
        tracker.set_states_tracker(saved)
        return items

    def _construct_shared_comm(self) -> Dict[str, Dict[str, Any]]:
        """For each shared key used on several stages: a group per pipeline joining the stages that
        use it, and the weights (of this stage's layer) that group keeps equal."""
        stages: Dict[str, List[int]] = OrderedDict()
        attrs: Dict[str, List[str]] = {}
        for index, desc in enumerate(self._layers_desc):
            if isinstance(desc, SharedLayerDesc):
                stage = self.get_stage_from_index(index)
                stages.setdefault(desc.layer_name, [])
                if stage not in stages[desc.layer_name]:
                    stages[desc.layer_name].append(stage)
                first = attrs.setdefault(desc.layer_name, desc.shared_weight_attr)
                if not set(desc.shared_weight_attr) <= set(first):
                    raise ValueError(f"SharedLayerDesc {desc.layer_name!r}: shared_weight_attr="
                                     f"{desc.shared_weight_attr} is not among the first one's {first}")
        comm: Dict[str, Dict[str, Any]] = {}
        for key, used in stages.items():
            if len(used) < 2:
                continue
            for line in self._topo.get_comm_list("pipe"):
                ranks = sorted(line[s] for s in used)
                group = dist.new_group(ranks)
                if self.global_rank in ranks:
                    comm[key] = {"ranks": ranks, "group": group, "weight_attr": attrs[key],
                                 "layer": self.shared_layers[key]}
        return comm

    def _synchronize_shared_weights(self) -> None:
        """The shared weights from the first stage that uses them; the later stages' copies are
        marked ``is_firstly_shared = False`` (a global-norm clip counts them once)."""
        for key, comm in self.shared_comm.items():
            with no_grad():
                for attr in comm["weight_attr"]:
                    weight = getattr(comm["layer"], attr)
                    _same_on_every_stage(key, attr, weight, comm)
                    dist.broadcast(weight, src=comm["ranks"][0], group=comm["group"])
                    weight.is_firstly_shared = self.global_rank == comm["ranks"][0]

    def allreduce_shared_weight_gradients(self) -> None:
        """Sum the shared weights' gradients over the stages that use them (a stage whose copy
        got none adds zeros)."""
        for comm in self.shared_comm.values():
            for attr in comm["weight_attr"]:
                weight = getattr(comm["layer"], attr)
                if weight.grad is None:
                    weight.grad = weight.array * 0
                dist.all_reduce(weight.grad, group=comm["group"])

    # ---- queries ----------------------------------------------------------------------------
    def get_stage_from_index(self, layer_idx: int) -> int:
        """The stage that holds ``layers[layer_idx]`` (part ``p`` of the cut is on stage ``p %
        num_stages``)."""
        if not 0 <= layer_idx < self._num_layers:
            raise ValueError(f"PipelineLayer.get_stage_from_index: layer_idx={layer_idx}; there are "
                             f"{self._num_layers} layers")
        return next(part % self._num_stages for part in range(len(self.segment_parts) - 1)
                    if self.segment_parts[part] <= layer_idx < self.segment_parts[part + 1])

    def get_num_virtual_stages(self) -> int:
        return self._num_virtual_pipeline_stages

    def get_model_chunks(self) -> Optional[List["PipelineLayerChunk"]]:
        """This stage's chunks, in order (paddle's: None without virtual stages)."""
        return self._model_chunks if self._num_virtual_pipeline_stages > 1 else None

    def _parts(self) -> List[Tuple[Optional[int], int, List[Callable[..., Any]]]]:
        """(chunk id, or None without virtual stages; its first item's index; its items)."""
        if self._num_virtual_pipeline_stages == 1:
            return [(None, self._start_pos, self.run_function)]
        return [(c, start, chunk.run_function)
                for c, (start, chunk) in enumerate(zip(self._start_poss, self._model_chunks))]

    # ---- checkpoints -------------------------------------------------------------------------
    def _layer_file(self, path: str, index: int, chunk: Optional[int], mp_rank: Any) -> str:
        virtual = "" if chunk is None else f"-virtual_pp_stage_{chunk:02d}"
        return os.path.join(path, f"layer_{index:02d}{virtual}-tensor_{mp_rank}-model_states.pdparams")

    def save_state_dict(self, path: str) -> None:
        """paddle's per-layer checkpoint: each item of this stage with a ``state_dict`` (a
        function has none) to ``path/layer_II-tensor_MM-model_states.pdparams`` (II its index in
        the list, MM the model-parallel rank; with virtual stages
        ``layer_II-virtual_pp_stage_CC-tensor_MM-...``, CC the chunk on this stage), written
        with ``pycoll.save``; the first data-parallel copy writes, the others hold the same weights."""
        coord = self._topo.get_coord(self.global_rank)._asdict()
        if coord.get("data", 0) != 0:
            return
        os.makedirs(path, exist_ok=True)
        for chunk, start, items in self._parts():
            for offset, fn in enumerate(items):
                if hasattr(fn, "state_dict"):
                    save(fn.state_dict(), self._layer_file(path, start + offset, chunk, f"{coord.get('model', 0):02d}"))

    def set_state_dir(self, path: str) -> None:
        """Load what ``save_state_dict`` wrote to ``path`` into this stage's items; a
        model-parallel rank takes its share of the layer's files, as paddle's does (so a
        checkpoint of another model-parallel degree loads where its files divide evenly)."""
        if not os.path.isdir(path):
            raise FileNotFoundError(f"PipelineLayer.set_state_dir: path={path!r} is not a directory")
        mp_rank = self._topo.get_coord(self.global_rank)._asdict().get("model", 0)
        mp_size = self._topo.get_dim("model") if "model" in self._topo.get_hybrid_group_names() else 1
        for chunk, start, items in self._parts():
            for offset, fn in enumerate(items):
                if not hasattr(fn, "set_state_dict"):
                    continue
                index = start + offset
                files = sorted(glob.glob(self._layer_file(glob.escape(path), index, chunk, "*")))
                if not files:
                    raise FileNotFoundError(f"PipelineLayer.set_state_dir: no {self._layer_file(path, index, chunk, 'MM')}"
                                            f" for layers[{index}] (save_state_dict writes them)")
                fn.set_state_dict(load(files[mp_rank * len(files) // mp_size]))

    # ---- running ----------------------------------------------------------------------------
    def forward_function(self, start: int, end: int) -> Callable[..., Any]:
        """This stage's items ``start:end`` run one after another on one input (a tuple stays one)."""
        def execute(*x: Any) -> Any:
            out = x[0] if len(x) == 1 else x
            for fn in self.run_function[start:end]:
                out = fn(out)
            return out
        return execute

    def forward(self, input: Any, chunk_id: Optional[int] = None) -> Any:  # noqa: A002 - paddle's name
        """This stage's items on ``input``; with virtual stages those of chunk ``chunk_id``
        (which then becomes ``run_function``, as in paddle)."""
        virtual = self._num_virtual_pipeline_stages > 1
        if virtual != (chunk_id is not None) or (virtual and chunk_id not in range(len(self._model_chunks))):
            raise ValueError(f"PipelineLayer.forward: chunk_id={chunk_id!r}; "
                             + (f"give one of 0..{len(self._model_chunks) - 1} (this stage's chunks)" if virtual
                                else "chunks belong to interleaved schedules (num_virtual_pipeline_stages > 1)"))
        if virtual:
            self.run_function = self._model_chunks[chunk_id].run_function
        count = len(self.run_function)
        if self._recompute_interval == 0:
            return self.forward_function(0, count)(input)
        for start in range(0, count, self._recompute_interval):
            end = min(start + self._recompute_interval, count)
            args = input if isinstance(input, tuple) else (input,)
            needs = any(isinstance(t, Tensor) and not t.stop_gradient for t in args) and any(
                isinstance(f, Layer) and f.parameters() for f in self.run_function[start:end])
            block = self.forward_function(start, end)
            input = recompute(block, *args) if needs else block(*args)
        return input


def _same_on_every_stage(key: str, attr: str, weight: Any, comm: Dict[str, Any]) -> None:
    """Refuse, on every stage that shares it, a tied weight whose shape or dtype differs between
    stages (the broadcast would fail in MPI, or scramble a transposed copy silently)."""
    seen: List[Any] = []
    dist.all_gather_object(seen, (list(weight.shape), str(weight.dtype)), group=comm["group"])
    if any(s != seen[0] for s in seen):
        stages = ", ".join(f"rank {r}: {shape} {dtype}" for r, (shape, dtype) in zip(comm["ranks"], seen))
        raise ValueError(f"SharedLayerDesc {key!r}: its {attr!r} must have one shape and dtype on every stage "
                         f"that shares it, got {stages}")

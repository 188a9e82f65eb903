"""A fully-sharded layer's state dict holds its whole parameters, as torch FSDP's full state dict
and paddle's (whose parameters are distributed tensors of the global shape) do. Between uses a
sharded parameter holds nothing (``weight.shape`` is ``[0]``) and each rank keeps only its piece,
so the layer's hooks assemble the whole:

- ``state_dict()`` gathers each sharded parameter from every rank's pieces into a new tensor of
  the whole shape (named as the parameter) and puts it in the dict in the parameter's place;
- ``set_state_dict(whole)`` gathers the parameters, loads the dict into them as into any layer
  (the same rules, warnings and return value), then keeps this rank's piece of each and lets the
  whole go again.

Both are collective over the sharding group: every rank calls them, in the same order (as for
forward). The hooks sit on every sub-layer holding sharded parameters, so ``model[0].state_dict()``
is whole too.
"""
from __future__ import annotations

from typing import Any, Dict, List

from pycoll.distributed.sharding import GroupShardedModel
from pycoll.nn import Layer
from pycoll.tensor import wrap


def register_full_state_hooks(module: Layer, model: GroupShardedModel) -> None:
    """Make ``module``'s state_dict / set_state_dict whole (see the module's text)."""
    held = {id(p) for p in model.held_in_use()}
    for layer in module.sublayers(include_self=True):
        mine = [p for p in layer.parameters(include_sublayers=False) if id(p) in held]
        if mine:
            layer.register_state_dict_hook(lambda out, mine=mine: _put_whole(model, mine, out))
            layer.register_load_state_dict_pre_hook(lambda _layer, _state, mine=mine: model.gather(mine))
            layer.register_load_state_dict_post_hook(lambda _layer, mine=mine: model.keep_pieces(mine))


def _put_whole(model: GroupShardedModel, mine: List[Any], out: Dict[str, Any]) -> None:
    """Replace each of ``mine`` found in ``out`` by a whole copy gathered from the pieces."""
    present = {id(p) for p in out.values()}
    wanted = [p for p in mine if id(p) in present]
    wholes = model.gathered(wanted)
    copies = {}
    for p in wanted:
        copy = wrap(wholes[id(p)])
        copy.name, copy.stop_gradient = p.name, p.stop_gradient
        copies[id(p)] = copy
    for key, value in out.items():
        if id(value) in copies:
            out[key] = copies[id(value)]

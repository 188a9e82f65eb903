"""paddle's MoE gates: ``NaiveGate`` (top-k of a linear score), ``GShardGate`` (top-2 with
capacity and random routing), ``SwitchGate`` (top-1 with capacity and jitter) and their base."""
from pycoll.incubate.distributed.models.moe.gate.base_gate import BaseGate
from pycoll.incubate.distributed.models.moe.gate.gshard_gate import GShardGate
from pycoll.incubate.distributed.models.moe.gate.naive_gate import NaiveGate
from pycoll.incubate.distributed.models.moe.gate.switch_gate import SwitchGate

__all__ = ["BaseGate", "GShardGate", "NaiveGate", "SwitchGate"]

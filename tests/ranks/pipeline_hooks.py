"""Paddle's pipeline hooks on 2 stages (pp_degree 2, accumulate_steps 4, micro_batch_size 1):
the global micro-step hooks (register_global_pipeline_parallel_hook) and the numbered forward /
backward hooks are called in the order, with the step ids, keyword names and tensor shapes that
Paddle 3.3.1's CPU build gave for the same script (train_batch, then eval_batch, where only the
global ones run and step_id is None). Then an interleaved pipeline (2 chunks per stage): its
forward and backward micro-steps are numbered 0..7 in turn, as paddle's virtual micro steps.
Last, VPPFhenBInBalancedMemory (accumulate_steps 3) runs its stage's forwards and backwards in
paddle's balanced order and trains exactly as PipelineParallelWithInterleaveFthenB does."""
import numpy as np

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn
from pycoll.distributed import fleet
from pycoll.distributed.fleet.meta_parallel import (LayerDesc, PipelineLayer, PipelineParallelMicroStepLocations as L,
                                                    PipelineParallelWithInterleave, PipelineParallelWithInterleaveFthenB,
                                                    VPPFhenBInBalancedMemory, register_global_pipeline_parallel_hook)

# Paddle 3.3.1, CPU build, 2 ranks, the same model and batch: each event is a numbered hook (f/b and
# its number) or location:step_id:input shape:output shape (forward_end only):output_tensor_grad
# shape:input_tensor_grad shape.
PADDLE = {
    0: "f0 forward_begin:0:[1,3]:-:None:None forward_end:0:[1,3]:[1,4]:None:None f1 forward_begin:1:[1,3]:-:None:None "
       "forward_end:1:[1,3]:[1,4]:None:None b0 backward_begin:0:None:-:[1,4]:None backward_end:0:None:-:[1,4]:None f2 "
       "forward_begin:2:[1,3]:-:None:None forward_end:2:[1,3]:[1,4]:None:None b1 backward_begin:1:None:-:[1,4]:None "
       "backward_end:1:None:-:[1,4]:None f3 forward_begin:3:[1,3]:-:None:None forward_end:3:[1,3]:[1,4]:None:None b2 "
       "backward_begin:2:None:-:[1,4]:None backward_end:2:None:-:[1,4]:None b3 backward_begin:3:None:-:[1,4]:None "
       "backward_end:3:None:-:[1,4]:None eval" + " forward_begin:None:[1,3]:-:None:None "
       "forward_end:None:[1,3]:[1,4]:None:None" * 4,
    1: "f0 forward_begin:0:[1,4]:-:None:None forward_end:0:[1,4]:[1,2]:None:None b0 backward_begin:0:[1,4]:-:None:None "
       "backward_end:0:[1,4]:-:None:[1,4] f1 forward_begin:1:[1,4]:-:None:None forward_end:1:[1,4]:[1,2]:None:None b1 "
       "backward_begin:1:[1,4]:-:None:None backward_end:1:[1,4]:-:None:[1,4] f2 forward_begin:2:[1,4]:-:None:None "
       "forward_end:2:[1,4]:[1,2]:None:None b2 backward_begin:2:[1,4]:-:None:None backward_end:2:[1,4]:-:None:[1,4] f3 "
       "forward_begin:3:[1,4]:-:None:None forward_end:3:[1,4]:[1,2]:None:None b3 backward_begin:3:[1,4]:-:None:None "
       "backward_end:3:[1,4]:-:None:[1,4] eval" + " forward_begin:None:[1,4]:-:None:None "
       "forward_end:None:[1,4]:[1,2]:None:None" * 4,
}
ACC = 4
strategy = fleet.DistributedStrategy()
strategy.hybrid_configs = {"dp_degree": 1, "mp_degree": 1, "pp_degree": 2}
strategy.pipeline_configs = {"accumulate_steps": ACC, "micro_batch_size": 1}
fleet.init(is_collective=True, strategy=strategy)
rank = dist.get_rank()
events = []


def shape(t):
    if t is None:
        return "None"
    if isinstance(t, (tuple, list)):
        return "[" + ",".join(shape(x) for x in t) + "]"
    return str(list(t.shape)).replace(" ", "")


KEYS = {L.FORWARD_BEGIN: {"input_tensor", "step_id"}, L.FORWARD_END: {"input_tensor", "output_tensor", "step_id"},
        L.BACKWARD_BEGIN: {"input_tensor", "output_tensor", "output_tensor_grad", "step_id"},
        L.BACKWARD_END: {"input_tensor", "input_tensor_grad", "output_tensor", "output_tensor_grad", "step_id"}}


def record(location):
    def hook(**kw):
        assert set(kw) == KEYS[location], (location, sorted(kw))  # paddle's keywords at each location
        out = shape(kw.get("output_tensor")) if location is L.FORWARD_END else "-"
        events.append(f"{location.value}:{kw['step_id']}:{shape(kw['input_tensor'])}:{out}:"
                      f"{shape(kw.get('output_tensor_grad'))}:{shape(kw.get('input_tensor_grad'))}")
    return hook


for location in L:
    register_global_pipeline_parallel_hook(location, record(location))
model = PipelineLayer([LayerDesc(nn.Linear, 3, 4), LayerDesc(nn.Linear, 4, 2)], num_stages=2,
                      loss_fn=lambda out, lab: ((out - lab) ** 2).mean())
model = fleet.distributed_model(model)
for i in range(ACC):
    model.register_forward_pipeline_parallel_hook(i, lambda k: events.append(f"f{k}"))
    model.register_backward_pipeline_parallel_hook(i, lambda k: events.append(f"b{k}"))
assert model.forward_pipeline_parallel_hook_capacity == ACC == model.backward_pipeline_parallel_hook_capacity
opt = fleet.distributed_optimizer(pycoll.optimizer.SGD(0.1, parameters=model.parameters()))
x, y = pycoll.to_tensor(np.ones((ACC, 3), "float32")), pycoll.to_tensor(np.zeros((ACC, 2), "float32"))
model.train_batch([x, y], opt)
events.append("eval")
model.eval_batch([x, y], compute_loss=True)
assert " ".join(events) == PADDLE[rank], f"rank {rank}:\n{' '.join(events)}\n{PADDLE[rank]}"
try:
    model.register_bubble_pipeline_parallel_hook(0, print)
    raise AssertionError("bubble hooks were taken")
except ValueError:
    pass

# the interleaved schedule: 2 chunks per stage, 8 virtual micro-steps each way
events.clear()
chunks = PipelineLayer([LayerDesc(nn.Linear, 3, 3) for _ in range(4)], num_stages=2, num_virtual_pipeline_stages=2,
                       seg_method="layer:Linear", loss_fn=lambda out, lab: ((out - lab) ** 2).mean())
inter = PipelineParallelWithInterleave(chunks, fleet.get_hybrid_communicate_group(), strategy)
numbered = []
for i in range(2 * ACC):
    inter.register_forward_pipeline_parallel_hook(i, lambda k: numbered.append(("F", k)))
    inter.register_backward_pipeline_parallel_hook(i, lambda k: numbered.append(("B", k)))
opt = fleet.distributed_optimizer(pycoll.optimizer.SGD(0.1, parameters=inter.parameters()))
inter.train_batch([pycoll.to_tensor(np.ones((ACC, 3), "float32")), pycoll.to_tensor(np.zeros((ACC, 3), "float32"))],
                  opt)
steps = {kind: [int(e.split(":")[1]) for e in events if e.startswith(f"{kind}_begin")] for kind in ("forward", "backward")}
assert steps == {"forward": list(range(8)), "backward": list(range(8))}, steps
assert [k for kind, k in numbered if kind == "F"] == list(range(8)) == [k for kind, k in numbered if kind == "B"]

# VPPFhenBInBalancedMemory against FthenB: 3 micro-batches, 2 chunks; forwards (F) and backwards
# (B) in paddle's balanced order (stage 0 runs 4 forwards first, stage 1 three)
BALANCED = {0: "FFFFFBFBBBBB", 1: "FFFFBFBFBBBB"}
strategy.pipeline_configs = {"accumulate_steps": 3, "micro_batch_size": 1}
batch = [pycoll.to_tensor(np.arange(9, dtype="float32").reshape(3, 3) / 9),
         pycoll.to_tensor(np.ones((3, 3), "float32"))]
results = []
for kind in (VPPFhenBInBalancedMemory, PipelineParallelWithInterleaveFthenB):
    events.clear()
    layer = PipelineLayer([LayerDesc(nn.Linear, 3, 3) for _ in range(4)], num_stages=2, num_virtual_pipeline_stages=2,
                          seg_method="layer:Linear", loss_fn=lambda out, lab: ((out - lab) ** 2).mean())
    model = kind(layer, fleet.get_hybrid_communicate_group(), strategy)
    opt = fleet.distributed_optimizer(pycoll.optimizer.SGD(0.5, parameters=model.parameters()))
    losses = [float(model.train_batch(batch, opt))]
    order = "".join(e[0].upper() for e in events if e.split(":")[0] in ("forward_begin", "backward_begin"))
    losses.append(float(model.train_batch(batch, opt)))
    results.append((losses, [p.numpy() for p in model.parameters()], order))
assert results[0][2] == BALANCED[rank] and results[1][2] == "F" * 6 + "B" * 6, (results[0][2], results[1][2])
assert results[0][0] == results[1][0] and results[0][0][1] < results[0][0][0], results
for a, b in zip(results[0][1], results[1][1]):
    np.testing.assert_array_equal(a, b)
# fleet.distributed_model picks it as paddle's does: pp_configs.best_unbalanced_scheduler, with
# pp_degree <= accumulate_steps < 2 x pp_degree
strategy.hybrid_configs["pp_configs"].best_unbalanced_scheduler = True
chosen = fleet.distributed_model(PipelineLayer([LayerDesc(nn.Linear, 3, 3) for _ in range(4)], num_stages=2,
                                               num_virtual_pipeline_stages=2, seg_method="layer:Linear",
                                               loss_fn=lambda out, lab: ((out - lab) ** 2).mean()))
assert type(chosen) is VPPFhenBInBalancedMemory, type(chosen)
print(f"OK rank={rank}", flush=True)

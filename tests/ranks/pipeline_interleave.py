"""Interleaved pipelines (``PipelineLayer(num_virtual_pipeline_stages=2)``) through fleet against
one process running the same list of layers (a one-stage PipelineLayer: the same initial weights,
drawn by layer index) micro-batch by micro-batch.

The model: an embedding tied to the output projection (``SharedLayerDesc`` "embed" on stage 0's
first chunk and stage 1's last one), and a gate shared by stage 1's two chunks ("gate", once as
a layer, once through a forward_func); ``seg_method="layer:Linear"`` cuts it into four parts.

``pp2`` (2 ranks): accumulate_steps 4 gives a PipelineParallelWithInterleave; its losses, every
parameter after each step (Momentum), eval_batch's loss and outputs equal the reference; the state
keys are the ones Paddle 3.3.1 gives for this list; accumulate_steps 2 gives a
PipelineParallelWithInterleaveFthenB, which trains like the reference too, and 1 is refused;
save_state_dict writes paddle's virtual-stage file names, which set_state_dir loads back.
``dp2pp2`` (4 ranks): two pipelines, each on half of every batch, gradients averaged over dp.
"""
import os
import sys

import numpy as np

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn
from fleet_afresh import init_afresh
from pycoll.distributed import fleet
from pycoll.distributed.fleet.meta_parallel import (LayerDesc, PipelineLayer, PipelineParallelWithInterleave,
                                                    PipelineParallelWithInterleaveFthenB, SharedLayerDesc)

TOL = dict(rtol=1e-6, atol=1e-6)
MBS, SEQ = 2, 3
# Paddle 3.3.1's PipelineLayer(DESCS, seg_method="layer:Linear", num_virtual_pipeline_stages=2) on
# 2 stages (its CPU build, each stage built in one process): segment_parts and state_dict keys
PADDLE_PARTS = [0, 2, 4, 6, 10]
PADDLE_KEYS = [['shared_layers.embed.weight', '0.0.weight', '0.1.weight', '0.1.bias', '4.1.weight', '4.1.bias'],
               ['shared_layers.gate.weight', 'shared_layers.embed.weight', '2.0.weight', '2.1.weight', '2.1.bias',
                '6.1.weight', '6.1.bias', '6.gate.weight', '6.embed.weight']]


class Scale(nn.Layer):
    def __init__(self, n):
        super().__init__()
        self.weight = self.create_parameter([n], default_initializer=nn.initializer.Uniform(0.5, 1.5))

    def forward(self, x):
        return x * self.weight


def gated(layer, x):
    return pycoll.tanh(x * layer.weight)


def head(embed, x):
    return pycoll.matmul(x, embed.weight, transpose_y=True)


DESCS = [SharedLayerDesc("embed", nn.Embedding, None, "weight", 10, 6), LayerDesc(nn.Linear, 6, 6),
         SharedLayerDesc("gate", Scale, None, "weight", 6), LayerDesc(nn.Linear, 6, 6), lambda x: x * 0.5,
         LayerDesc(nn.Linear, 6, 6), LayerDesc(nn.Tanh), LayerDesc(nn.Linear, 6, 6),
         SharedLayerDesc("gate", Scale, gated, "weight", 6), SharedLayerDesc("embed", nn.Embedding, head, "weight", 10, 6)]


def start(dp, acc):
    strategy = fleet.DistributedStrategy()
    strategy.hybrid_configs = {"dp_degree": dp, "mp_degree": 1, "pp_degree": 2}
    strategy.pipeline_configs = {"accumulate_steps": acc, "micro_batch_size": MBS}
    init_afresh(strategy)  # a second fleet.init would keep the first groups
    return fleet.get_hybrid_communicate_group()


def reference_name(key):
    """The one-stage layer's key for an interleaved stage's key (chunk start . place in chunk)."""
    head_, second, rest = key.split(".", 2) if key.count(".") >= 2 else (key, "", "")
    if head_ == "shared_layers" or not second.isdigit():
        return key if head_ == "shared_layers" else f"shared_layers.{second}.{rest}"
    index = int(head_) + int(second)
    desc = DESCS[index]
    return f"shared_layers.{desc.layer_name}.{rest}" if isinstance(desc, SharedLayerDesc) else f"{index}.{rest}"


def compare(layer, ref, when):
    ref_state = ref.state_dict()
    for key, value in layer.state_dict().items():
        np.testing.assert_allclose(value.numpy(), ref_state[reference_name(key)].numpy(), err_msg=f"{when}: {key}",
                                   **TOL)


def batch(data, rows):
    ids = data.integers(0, 10, (rows, SEQ)).astype("int64")
    return ids, data.standard_normal((rows, SEQ, 10)).astype("float32")


def train(hcg, acc, kind, steps=3):
    dp_rank, dp = hcg.get_data_parallel_rank(), hcg.get_data_parallel_world_size()
    layer = PipelineLayer(DESCS, topology=hcg.topology(), loss_fn=nn.MSELoss(), seg_method="layer:Linear",
                          num_virtual_pipeline_stages=2)
    stage = hcg.get_stage_id()
    assert layer.segment_parts == PADDLE_PARTS and list(layer.state_dict()) == PADDLE_KEYS[stage]
    assert [layer.get_stage_from_index(i) for i in range(10)] == [0, 0, 1, 1, 0, 0, 1, 1, 1, 1]  # paddle's
    ref = PipelineLayer(DESCS, topology=fleet.CommunicateTopology(["data", "pipe", "model"],
                                                                  [dist.get_world_size(), 1, 1]),
                        loss_fn=nn.MSELoss())
    compare(layer, ref, "at start")  # the tied embedding came from stage 0 (seed of index 0)
    opt = fleet.distributed_optimizer(pycoll.optimizer.Momentum(learning_rate=0.2, momentum=0.9,
                                                                 parameters=layer.parameters()))
    ref_opt = pycoll.optimizer.Momentum(learning_rate=0.2, momentum=0.9, parameters=ref.parameters())
    model = fleet.distributed_model(layer)
    assert type(model) is kind, type(model)
    assert model.num_model_chunks == 2 and model.model_chunks == layer.get_model_chunks()
    data = np.random.default_rng(3)
    rows = MBS * acc
    for step in range(steps):
        parts = [batch(data, rows) for _ in range(dp)]
        ids, target = parts[dp_rank]
        loss = model.train_batch([pycoll.to_tensor(ids), pycoll.to_tensor(target)], opt)
        ref_loss = 0.0
        for ids_p, target_p in parts:  # every pipeline's micro-batches, averaged over dp
            for m in range(acc):
                rows_m = slice(m * MBS, (m + 1) * MBS)
                out = ref(pycoll.to_tensor(ids_p[rows_m]))
                micro = nn.MSELoss()(out, pycoll.to_tensor(target_p[rows_m])) / (acc * dp)
                micro.backward()
                if ids_p is ids:
                    ref_loss += float(micro) * dp
        ref_opt.step()
        ref_opt.clear_grad()
        np.testing.assert_allclose(float(loss.numpy().reshape(-1)[0]), ref_loss, err_msg=f"loss {step}", **TOL)
        compare(layer, ref, f"step {step}")
    ids, target = pycoll.to_tensor(parts[dp_rank][0]), pycoll.to_tensor(parts[dp_rank][1])
    with pycoll.no_grad():
        ref_out = ref(ids)
    evaluated = model.eval_batch([ids, target], compute_loss=True)
    np.testing.assert_allclose(float(evaluated.numpy().reshape(-1)[0]), float(nn.MSELoss()(ref_out, target)), **TOL)
    outputs = model.eval_batch([ids, target])
    assert len(outputs) == acc
    if hcg.is_last_stage:
        np.testing.assert_allclose(np.concatenate([o.numpy() for o in outputs]), ref_out.numpy(), **TOL)
    return layer, float(loss.numpy().reshape(-1)[0])


def checkpoint(layer, hcg, folder):
    layer.save_state_dict(folder)
    dist.barrier()
    names = sorted(os.listdir(folder))
    # paddle's names, layer_II-virtual_pp_stage_CC-tensor_MM-model_states.pdparams, for each layer (a Tanh
    # too: paddle.save writes an empty state); functions and forward_func partials have none
    expected = sorted(f"layer_{i:02d}-virtual_pp_stage_{c:02d}-tensor_00-model_states.pdparams"
                      for i, c in [(0, 0), (1, 0), (5, 1), (2, 0), (3, 0), (6, 1), (7, 1)])
    assert names == expected, names
    fresh = PipelineLayer(DESCS, topology=hcg.topology(), loss_fn=nn.MSELoss(), seg_method="layer:Linear",
                          num_virtual_pipeline_stages=2)
    fresh.set_state_dir(folder)
    for (key, value), (key2, value2) in zip(layer.state_dict().items(), fresh.state_dict().items()):
        assert key == key2
        if hcg.is_last_stage and "embed" in key:
            continue  # stage 1 reaches the tied embedding only through a forward_func: no file (paddle's too)
        np.testing.assert_array_equal(value.numpy(), value2.numpy(), err_msg=key)


def refused(fn, needle):
    try:
        fn()
    except ValueError as e:
        assert needle in str(e), str(e)
    else:
        raise AssertionError(f"expected ValueError with {needle!r}")


dist.init_parallel_env()
mode = sys.argv[1]
if mode == "pp2":
    hcg = start(1, 4)
    layer, loss = train(hcg, 4, PipelineParallelWithInterleave)
    if len(sys.argv) > 2:
        checkpoint(layer, hcg, os.path.join(sys.argv[2], "ckpt"))
    train(start(1, 2), 2, PipelineParallelWithInterleaveFthenB, steps=2)
    hcg = start(1, 1)
    refused(lambda: fleet.distributed_model(PipelineLayer(DESCS, topology=hcg.topology(), seg_method="layer:Linear",
                                                          num_virtual_pipeline_stages=2)),
            "accumulate_steps=1; it must be at least pp_degree = 2")
else:
    layer, loss = train(start(2, 4), 4, PipelineParallelWithInterleave, steps=2)
print(f"pipeline interleave OK rank={dist.get_rank()} mode={mode} loss={loss:.6f}", flush=True)

import pycoll
import pycoll.distributed as dist
mesh = dist.ProcessMesh([0, 1], dim_names=["x"])
class MLP(pycoll.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = pycoll.nn.Linear(8, 8)
        self.fc2 = pycoll.nn.Linear(8, 8)

    def forward(self, input):
        return self.fc2(self.fc1(input))
# doctest: +REQUIRES(env:DISTRIBUTED)
layer = MLP()
batch = pycoll.rand(shape=[8, 8])
opt = pycoll.optimizer.AdamW(parameters=layer.parameters())
opt = dist.shard_optimizer(opt, dist.ShardingStage1("x", mesh))
for _ in range(5):
    loss = layer(batch)
    loss.backward()
    opt.step()
    opt.clear_grad()
# This case need to be executed in multi-card environment
# python -m pycoll.distributed.launch --gpus=0,1 {test_case}.py

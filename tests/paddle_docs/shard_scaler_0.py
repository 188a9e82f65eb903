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
layer = MLP()
batch = pycoll.rand(shape=[8, 8])
opt = pycoll.optimizer.AdamW(parameters=layer.parameters())
layer, opt = pycoll.amp.decorate(layer, opt, level='O2')
scaler = pycoll.amp.GradScaler(init_loss_scaling=1024)
scaler = dist.shard_scaler(scaler)
opt = dist.shard_optimizer(opt)
for _ in range(5):
    with pycoll.amp.auto_cast(True):
        loss = layer(batch)
    scaled = scaler.scale(loss)
    scaled.backward()
    scaler.step(opt)
    scaler.update()
    opt.clear_grad()
# This case need to be executed in multi-card environment
# python -m pycoll.distributed.launch --gpus=0,1 {test_case}.py

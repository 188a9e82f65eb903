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
def shard_fn(layer_name, layer, process_mesh):
    if layer_name == 'fc1':
        layer.weight = dist.shard_tensor(layer.weight, process_mesh, [dist.Shard(0)])
layer = MLP()
layer = dist.shard_layer(layer, mesh, shard_fn)
print(layer)
# This case need to be executed in multi-card environment
# export CUDA_VISIBLE_DEVICES=0,1
# python -m pycoll.distributed.launch {test_case}.py

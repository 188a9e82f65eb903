# doctest: +REQUIRES(env:DISTRIBUTED)
import pycoll
import pycoll.nn as nn
import pycoll.optimizer as opt
import pycoll.distributed as dist
class LinearNet(nn.Layer):
    def __init__(self):
        super().__init__()
        self._linear1 = nn.Linear(10, 10)
        self._linear2 = nn.Linear(10, 1)
    def forward(self, x):
        return self._linear2(self._linear1(x))
def train():
    # 1. initialize parallel environment
    dist.init_parallel_env()
    # 2. create data parallel layer & optimizer
    layer = LinearNet()
    dp_layer = pycoll.DataParallel(layer)
    loss_fn = nn.MSELoss()
    adam = opt.Adam(
        learning_rate=0.001, parameters=dp_layer.parameters())
    # 3. run layer
    inputs = pycoll.randn([10, 10], 'float32')
    outputs = dp_layer(inputs)
    labels = pycoll.randn([10, 1], 'float32')
    loss = loss_fn(outputs, labels)
    loss.backward()
    adam.step()
    adam.clear_grad()
if __name__ == '__main__':
    # 1. start by ``pycoll.distributed.spawn`` (default)
    dist.spawn(train, nprocs=2)
    # 2. start by ``pycoll.distributed.launch``
    # train()

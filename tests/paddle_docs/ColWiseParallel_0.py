import pycoll
import pycoll.distributed as dist
class MLP(pycoll.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = pycoll.nn.Linear(8, 8)
        self.fc2 = pycoll.nn.Linear(8, 8)

    def forward(self, input):
        return self.fc2(self.fc1(input))
# doctest: +REQUIRES(env:DISTRIBUTED)
layer = MLP()
mp_config = {
    'fc1': dist.ColWiseParallel()
}

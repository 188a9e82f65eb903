# Example1: for collective training
import pycoll
pycoll.enable_static()
import pycoll.distributed.fleet as fleet
fleet.init(is_collective=True)
strategy = fleet.DistributedStrategy()
linear = pycoll.nn.Linear(10, 10)
optimizer = pycoll.optimizer.SGD(learning_rate=0.001, parameters=linear.parameters())
optimizer = fleet.distributed_optimizer(optimizer, strategy=strategy)
# do distributed training

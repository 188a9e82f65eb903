import pycoll
import pycoll.distributed.fleet as fleet
fleet.init(is_collective=True)
linear = pycoll.nn.Linear(10, 10)
strategy = fleet.DistributedStrategy()
optimizer = pycoll.optimizer.SGD(learning_rate=0.001, parameters=linear.parameters())
optimizer = fleet.distributed_optimizer(optimizer, strategy=strategy)

import pycoll.distributed.fleet as fleet
fleet.init(is_collective=True)

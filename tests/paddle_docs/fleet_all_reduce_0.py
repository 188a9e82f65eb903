import pycoll.distributed.fleet as fleet
fleet.init()
res = fleet.all_reduce(5)

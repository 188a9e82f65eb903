import pycoll
pycoll.enable_static()
dataset = pycoll.distributed.InMemoryDataset()

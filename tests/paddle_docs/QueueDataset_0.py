import pycoll
dataset = pycoll.distributed.QueueDataset()

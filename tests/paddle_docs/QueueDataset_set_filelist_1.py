import pycoll
dataset = pycoll.distributed.fleet.DatasetBase()
dataset.set_filelist(['a.txt', 'b.txt'])

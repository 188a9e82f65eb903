import pycoll
class RangeDataset(pycoll.io.Dataset):  # type: ignore[type-arg]
    def __init__(self, start, stop):
        self.start = start
        self.stop = stop

    def __getitem__(self, index):
        return index + self.start

    def __len__(self):
        return self.stop - self.start
# Example 1:
a = pycoll.io.Subset(dataset=RangeDataset(1, 4), indices=[0, 2])
print(list(a))
# Example 2:
b = pycoll.io.Subset(dataset=RangeDataset(1, 4), indices=[1, 1])
print(list(b))

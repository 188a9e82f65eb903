"""shard_dataloader over the 2 data-parallel ranks reads as paddle's ShardDataloader reads: through
a DistributedBatchSampler, so that a shuffling loader gives every rank the same permutation (each
sample once per epoch, whatever each rank's own random state) and a last batch smaller than the
ranks is padded, not refused; a loader given a DistributedBatchSampler is taken as each rank's
rows. Every rank prints ``OK`` at the end."""
import numpy as np

import pycoll
import pycoll.distributed as dist
from pycoll.io import DataLoader, Dataset, DistributedBatchSampler

dist.init_parallel_env()
rank = dist.get_rank()
mesh = dist.ProcessMesh([0, 1], dim_names=["dp"])


class Numbers(Dataset):
    def __init__(self, n):
        self.n = n

    def __getitem__(self, i):
        return np.full([2], i, np.float32)

    def __len__(self):
        return self.n


def rows_of(loader):
    """Each batch's rows on this rank, and the global batch's shape."""
    seen = []
    for batch in loader():
        assert batch.placements == [dist.Shard(0)], batch.placements
        seen.append((batch._local_value().numpy()[:, 0].astype(int).tolist(), batch.shape))
    return seen


def everyone(value):
    gathered = []
    dist.all_gather_object(gathered, value)
    return gathered


np.random.seed(100 + rank)  # the ranks' own random states differ, as after any rank-dependent work
shuffled = dist.shard_dataloader(DataLoader(Numbers(16), batch_size=4, shuffle=True), meshes=[mesh], shard_dims="dp")
epochs = []
for _ in range(2):
    mine = [rows for rows, shape in rows_of(shuffled)]
    both = everyone(mine)
    assert sorted(sum(sum(both, []), [])) == list(range(16)), both  # each sample once in the epoch
    epochs.append(both)
assert epochs[0] != epochs[1], epochs  # a new permutation each epoch

tail = rows_of(dist.shard_dataloader(DataLoader(Numbers(5), batch_size=4), meshes=[mesh], shard_dims="dp"))
assert [len(rows) for rows, _ in tail] == [2, 1] and [shape for _, shape in tail] == [[4, 2], [2, 2]], tail
assert sorted(sum(sum(everyone([rows for rows, _ in tail]), []), [])) == [0, 0, 1, 2, 3, 4]  # padded

sampler = DistributedBatchSampler(Numbers(8), batch_size=2, num_replicas=2, rank=rank)
given = rows_of(dist.shard_dataloader(DataLoader(Numbers(8), batch_sampler=sampler), meshes=[mesh], shard_dims="dp"))
assert [len(rows) for rows, _ in given] == [2, 2] and given[0][1] == [4, 2], given
assert sorted(sum(sum(everyone([rows for rows, _ in given]), []), [])) == list(range(8))
print(f"OK rank={rank}", flush=True)

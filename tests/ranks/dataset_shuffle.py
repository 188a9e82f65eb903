"""InMemoryDataset's global shuffle on a live job (argv[1]: a scratch folder): every rank writes
and loads its own file of 4 000 records (a unique id, and 0-3 float features), shuffles them
across the ranks, and checks that no record is lost or doubled, that every rank holds about its
share, that the order changed, that a seed repeats the shuffle (and sends the same records in many
small rounds), and that batches come out; then a QueueDataset reads the files it is given."""
import os
import sys


import pycoll
import pycoll.distributed as dist
from pycoll.distributed.dataset import Slot, datasets
from pycoll.distributed import fleet

dist.init_parallel_env()
rank, n = dist.get_rank(), dist.get_world_size()
PER_RANK = 4000
CHUNK_BYTES = datasets.CHUNK_BYTES
path = os.path.join(sys.argv[1], f"part-{rank}.txt")
with open(path, "w") as f:
    for i in range(PER_RANK):
        ident = rank * PER_RANK + i
        feats = [f"{(ident % 7) * 0.5:g}"] * (ident % 4 + 1)  # paddle's reader refuses a count of 0
        f.write(f"1 {ident} {len(feats)} {' '.join(feats)}\n")

data = dist.InMemoryDataset()
data.init(batch_size=32, use_var=[Slot("id", "int64"), Slot("feat", "float32")])
data.set_filelist([path])
data.load_into_memory()
assert data.get_memory_data_size() == PER_RANK and data.get_memory_data_size(fleet=True) == PER_RANK * n


def ids():
    return [int(line.split()[1]) for line in data._records]


pycoll.seed(11 + rank)
data.global_shuffle(fleet)
mine = ids()
everyone = []
dist.all_gather_object(everyone, mine)
union = sorted(i for part in everyone for i in part)
assert union == list(range(PER_RANK * n)), "a record was lost or doubled"
share = PER_RANK * n / n
assert all(abs(len(part) - share) <= 0.05 * share for part in everyone) or n == 1, [len(p) for p in everyone]
assert mine != sorted(mine), "the order changed"
assert data.get_shuffle_data_size(fleet=True) == PER_RANK * n

data.release_memory()
data.load_into_memory()
pycoll.seed(11 + rank)
data.global_shuffle(fleet)
assert ids() == mine, "the same seeds repeat the shuffle"

# without fleet, paddle's global_shuffle shuffles over one trainer: this rank's records stay here
data.release_memory()
data.load_into_memory()
before = ids()
data.global_shuffle()
assert sorted(ids()) == sorted(before) and ids() != before, "records crossed ranks without fleet"

datasets.CHUNK_BYTES = 1000  # many rounds of alltoall (a few dozen records per peer each)
data.release_memory()
data.load_into_memory()
pycoll.seed(11 + rank)
data.global_shuffle(fleet)
assert sorted(ids()) == sorted(mine), "in rounds, the same records reach the same ranks"
datasets.CHUNK_BYTES = CHUNK_BYTES

data.local_shuffle()
assert sorted(ids()) == sorted(mine), "a local shuffle keeps this rank's records"
count = 0
for batch in data:
    lengths = batch["feat.lengths"].numpy()
    assert batch["id"].shape[0] == len(lengths) <= 32
    assert all((batch["id"].numpy()[:, 0] % 4 + 1) == lengths)
    count += len(lengths)
assert count == len(mine)

# a QueueDataset streams the files it is given, as paddle's: this rank's own file (no second split
# among the ranks), or every rank's file when it is given them all
dist.barrier()  # every rank's file is written
for files in ([path], [os.path.join(sys.argv[1], f"part-{r}.txt") for r in range(n)]):
    queue = dist.QueueDataset()
    queue.init(batch_size=500, use_var=[Slot("id", "int64"), Slot("feat", "float32")])
    queue.set_filelist(files)
    streamed = sorted(int(i) for batch in queue for i in batch["id"].numpy()[:, 0])
    assert streamed == sorted(int(line.split()[1]) for f in files for line in open(f)), len(streamed)
print(f"dataset OK rank={rank} records={len(mine)}", flush=True)

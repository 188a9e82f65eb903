"""dist.to_distributed where paddle 3.3.1 picks data parallelism alone (2 devices, or an odd
number), on 2 ranks (tests/ranks/to_distributed.py); the counts that bring tensor or pipeline
parallelism, and those paddle refuses, are refused by name."""
import pytest

import pycoll.distributed as dist
import pycoll.nn as nn
from conftest import assert_ok, launch


def test_two_ranks_train_data_parallel_like_full_batches():
    assert_ok(launch(2, "to_distributed.py", timeout=90), expect_lines=2)


@pytest.mark.parametrize("device_num, error, words", [
    (10, ValueError, "even number"), (0, ValueError, "positive int"), (True, ValueError, "positive int"),
    (6, NotImplementedError, "tensor parallelism"), (8, NotImplementedError, "tensor and pipeline"),
])
def test_device_counts_beyond_data_parallelism_are_refused(device_num, error, words):
    with pytest.raises(error, match=words):
        dist.to_distributed(nn.Linear(2, 2), None, None, device_num)

"""dist.ConvParallel, paddle 3.3.1's spatial-parallel plan for Conv2D: its rules for when an input
may be split along its width (paddle's _is_supported), and a 2-rank parallelized model whose
values and gradients equal a plain one's (tests/ranks/conv_parallel.py)."""
import pytest

import pycoll.distributed as dist
from conftest import assert_ok, launch

# (input size, kernel (weight) shape, stride, width padded, dilation, data_format, mp size) -> supported,
# by paddle's rules in auto_parallel/intermediate/tensor_parallel.py
RULES = [
    (([2, 3, 5, 8], [4, 3, 3, 3], [1, 1], True, [1, 1], "NCHW", 2), True),
    (([2, 5, 8, 3], [4, 3, 3, 3], [1, 1], True, [1, 1], "NHWC", 2), True),
    (([2, 3, 5, 8], [4, 3, 3, 3], [1, 1], True, [1, 1], "NCDHW", 2), False),
    (([2, 3, 5, 9], [4, 3, 3, 3], [1, 1], True, [1, 1], "NCHW", 2), False),  # width % mp
    (([2, 3, 5, 8], [4, 3, 3, 3], [1, 1], True, [1, 2], "NCHW", 2), False),  # width dilation
    (([2, 3, 5, 6], [4, 3, 3, 3], [1, 3], False, [1, 1], "NCHW", 2), True),  # stride = kernel, no padding
    (([2, 3, 5, 6], [4, 3, 3, 3], [1, 1], False, [1, 1], "NCHW", 2), False),  # stride != kernel
    (([2, 3, 5, 8], [4, 3, 3, 4], [1, 4], False, [1, 1], "NCHW", 4), True),
    (([2, 3, 5, 8], [4, 3, 3, 3], [1, 2], True, [1, 1], "NCHW", 2), False),  # padded needs stride 1
    (([2, 3, 5, 2], [4, 3, 3, 5], [1, 1], True, [1, 1], "NCHW", 2), True),  # kernel // 2 <= width
    (([2, 3, 5, 2], [4, 3, 3, 7], [1, 1], True, [1, 1], "NCHW", 2), False),
]


@pytest.mark.parametrize("args, supported", RULES)
def test_when_a_width_split_is_supported(args, supported):
    assert dist.ConvParallel._is_supported(*args) is supported


def test_conv_parallel_splits_the_width_and_keeps_values():
    assert_ok(launch(2, "conv_parallel.py", timeout=90), expect_lines=2)

"""pycoll's tensor/nn ops, forward + backward, timed against Paddle 3.3.1's CPU build in the same run.

    python bench/ops_vs_paddle.py --peer-python /tmp/paddlevenv/bin/python [--rounds 2] [--repeats 5]
                                  [--cases gelu_exact,topk,...] [--threads 1] [--json out.json]

Each case is written once, against the module variable ``P`` (``paddle`` or ``pycoll``): its setup
builds the inputs from the same seeded NumPy arrays and returns one call (forward, then backward of
the sum or the loss; an optimizer step or a DataLoader epoch where that is the case). A worker
process per library (this script with ``--worker``) times each case: one untimed warm-up call, then
the best of ``--repeats`` calls (``time.perf_counter``). The driver starts ``--rounds`` rounds of one
worker per library, which goes first flipping from round to round, and keeps each case's best over
the rounds. Every worker runs with OMP_NUM_THREADS, OPENBLAS_NUM_THREADS and MKL_NUM_THREADS set to
``--threads`` (default 1: one BLAS/OpenMP thread for both libraries). The table gives Paddle's and
pycoll's milliseconds and pycoll / Paddle (above 1: pycoll is slower). Without ``--peer-python`` (or
when that interpreter cannot import paddle) the Paddle column is skipped, with a message saying so.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np

P = None  # the library under test, set by worker(): paddle or pycoll
Call = Callable[[], object]
CASES: Dict[str, Callable[[], Call]] = {}  # name -> setup (returns the timed call), in table order


def case(name: str):
    def register(setup: Callable[[], Call]) -> Callable[[], Call]:
        CASES[name] = setup
        return setup
    return register


def tensor(*shape: int, grad: bool = True, seed: int = 0):
    """A float32 standard-normal tensor, the same values in both libraries."""
    data = np.random.RandomState(seed).randn(*shape).astype("float32")
    return P.to_tensor(data, stop_gradient=not grad)


def ints(high: int, *shape: int, seed: int = 1):
    return P.to_tensor(np.random.RandomState(seed).randint(0, high, shape).astype("int64"))


def sum_backward(forward: Callable[[], object]) -> Call:
    """The call ``forward().sum().backward()`` (the first output where a layer returns several)."""
    def call():
        out = forward()
        if isinstance(out, (tuple, list)):
            out = out[0]
        out.sum().backward()
    return call


def layer_call(layer, *inputs) -> Call:
    return sum_backward(lambda: layer(*inputs))


# -- the cases the probe found slow (elementwise on [64, 128, 512], selections on [4096, 1000]) ---

@case("gelu_tanh")
def _():
    x = tensor(64, 128, 512)
    return sum_backward(lambda: P.nn.functional.gelu(x, approximate=True))


@case("gelu_exact")
def _():
    x = tensor(64, 128, 512)
    return sum_backward(lambda: P.nn.functional.gelu(x))


@case("sigmoid")
def _():
    x = tensor(64, 128, 512)
    return sum_backward(lambda: P.nn.functional.sigmoid(x))


@case("silu")
def _():
    x = tensor(64, 128, 512)
    return sum_backward(lambda: P.nn.functional.silu(x))


@case("erf")
def _():
    x = tensor(64, 128, 512)
    return sum_backward(lambda: P.erf(x))


@case("topk")
def _():
    x = tensor(4096, 1000)
    return sum_backward(lambda: P.topk(x, 10))


@case("kthvalue")
def _():
    x = tensor(4096, 1000)
    return sum_backward(lambda: P.kthvalue(x, 5, -1))


@case("batchnorm2d")
def _():
    return layer_call(P.nn.BatchNorm2D(64), tensor(16, 64, 32, 32))


@case("maxpool2d_2x2")
def _():
    return layer_call(P.nn.MaxPool2D(2, 2), tensor(16, 64, 32, 32))


@case("maxpool2d_3s2p1")
def _():
    return layer_call(P.nn.MaxPool2D(3, 2, 1), tensor(16, 64, 32, 32))


@case("avgpool2d_2x2")
def _():
    return layer_call(P.nn.AvgPool2D(2, 2), tensor(16, 64, 32, 32))


@case("one_hot")
def _():
    labels = ints(1000, 4096)
    return lambda: P.nn.functional.one_hot(labels, 1000)


@case("cumsum")
def _():
    x = tensor(64, 128, 512)
    return sum_backward(lambda: P.cumsum(x, -1))


# -- representative layers and steps -------------------------------------------------------------

@case("linear_3d")
def _():
    return layer_call(P.nn.Linear(512, 512), tensor(16, 128, 512))


@case("conv2d_3x3")
def _():
    return layer_call(P.nn.Conv2D(32, 64, 3, padding=1), tensor(16, 32, 32, 32))


@case("layernorm")
def _():
    return layer_call(P.nn.LayerNorm(256), tensor(8, 128, 256))


@case("sdpa")
def _():
    q, k, v = (tensor(8, 128, 8, 32, seed=s) for s in range(3))
    return sum_backward(lambda: P.nn.functional.scaled_dot_product_attention(q, k, v))


@case("lstm")
def _():
    return layer_call(P.nn.LSTM(128, 128), tensor(16, 32, 128))


@case("lstm_2layer_bidirect")
def _():
    return layer_call(P.nn.LSTM(128, 128, num_layers=2, direction="bidirect"), tensor(16, 32, 128))


@case("gru")
def _():
    return layer_call(P.nn.GRU(128, 128), tensor(16, 32, 128))


@case("lstm_long_small")
def _():
    """500 steps of a small hidden state: the per-step cost, not the matmuls, decides."""
    return layer_call(P.nn.LSTM(16, 16), tensor(8, 500, 16))


@case("gru_long_small")
def _():
    return layer_call(P.nn.GRU(16, 16), tensor(8, 500, 16))


@case("scatter_nd_add_rows")
def _():
    """20 000 rows of 512 added into 2 000 (repeats adding up), and the backward."""
    x, updates = tensor(2000, 512), tensor(20000, 512, seed=1)
    index = ints(2000, 20000, 1, seed=2)
    return sum_backward(lambda: P.scatter_nd_add(x, index, updates))


@case("index_add_rows")
def _():
    x, values = tensor(2000, 512), tensor(20000, 512, seed=1)
    index = ints(2000, 20000, seed=2)
    return sum_backward(lambda: P.index_add(x, index, 0, values))


@case("embedding_dense_backward")
def _():
    """Embedding(30 000, 256) on [64, 128] ids, the dense gradient (sparse=False)."""
    return layer_call(P.nn.Embedding(30000, 256), ints(30000, 64, 128))


@case("cross_entropy")
def _():
    logits, labels = tensor(4096, 30000), ints(30000, 4096)
    return lambda: P.nn.functional.cross_entropy(logits, labels).backward()


@case("adamw_step")
def _():
    """AdamW.step over ResNet-18's parameters (11.7 M), their gradients from one backward."""
    model = P.vision.models.resnet18()
    model(tensor(2, 3, 32, 32, grad=False)).sum().backward()
    opt = P.optimizer.AdamW(1e-3, parameters=[p for p in model.parameters() if p.grad is not None])
    return opt.step


def sparse_embedding_step(make_optimizer: Callable[[object], object]) -> Call:
    """Embedding(1_000_000, 64, sparse=True) on [64, 32] ids: forward, backward, a step."""
    emb = P.nn.Embedding(1_000_000, 64, sparse=True)
    ids = ints(1_000_000, 64, 32)
    opt = make_optimizer(emb.parameters())

    def call():
        emb(ids).mean().backward()
        opt.step()
        opt.clear_grad()
    return call


@case("sparse_embedding_step")
def _():
    return sparse_embedding_step(lambda params: P.optimizer.SGD(0.1, parameters=params))


@case("sparse_embedding_adagrad")
def _():
    return sparse_embedding_step(lambda params: P.optimizer.Adagrad(0.1, parameters=params))


@case("sparse_embedding_clipped")
def _():
    return sparse_embedding_step(lambda params: P.optimizer.SGD(
        0.1, parameters=params, grad_clip=P.nn.ClipGradByGlobalNorm(1.0)))


@case("resnet18")
def _():
    model = P.vision.models.resnet18()
    x = tensor(8, 3, 64, 64, grad=False)

    def call():
        model(x).sum().backward()
        model.clear_gradients()
    return call


@case("cummax")
def _():
    x = tensor(4096, 1000)
    return sum_backward(lambda: P.cummax(x, axis=1))


@case("put_along_axis_mean")
def _():
    """put_along_axis(reduce='mean') of [4096, 1000] values at indices drawn from the row's 1000."""
    arr, values = tensor(4096, 1000), tensor(4096, 1000, seed=2)
    index = ints(1000, 4096, 1000)
    return sum_backward(lambda: P.put_along_axis(arr, index, values, axis=1, reduce="mean"))


@case("linalg_inv_256")
def _():
    """inv of 64 well-conditioned [256, 256] matrices (a random one plus 16 on the diagonal)."""
    x = P.to_tensor(np.random.RandomState(0).randn(64, 256, 256).astype("float32") + 16 * np.eye(256, dtype="float32"),
                    stop_gradient=False)
    return sum_backward(lambda: P.linalg.inv(x))


@case("add_n_1000")
def _():
    """add_n of 1000 [4, 8] tensors that take no gradient (summing a list of values)."""
    parts = [tensor(4, 8, grad=False, seed=i) for i in range(1000)]
    return lambda: P.add_n(parts)


@case("concat_1000")
def _():
    parts = [tensor(4, 8, grad=False, seed=i) for i in range(1000)]
    return lambda: P.concat(parts)


@case("stack_1000")
def _():
    parts = [tensor(4, 8, grad=False, seed=i) for i in range(1000)]
    return lambda: P.stack(parts)


@case("dataloader")
def _():
    """One shuffled epoch of a 10 000-sample TensorDataset, batch 64, num_workers=0."""
    data = P.io.TensorDataset([tensor(10000, 32, grad=False), ints(10, 10000, 1)])

    def call():
        for _batch in P.io.DataLoader(data, batch_size=64, shuffle=True, num_workers=0):
            pass
    return call


@case("dataloader_workers")
def _():
    """One epoch of 8 batches of [64, 3, 224, 224] float32 from 2 worker processes (use_shared_memory,
    the default); the dataset makes each sample anew, as a decoding one would."""
    class Images(P.io.Dataset):
        def __len__(self):
            return 512

        def __getitem__(self, i):
            return np.full((3, 224, 224), i, np.float32), np.int64(i)

    def call():
        for _batch in P.io.DataLoader(Images(), batch_size=64, num_workers=2):
            pass
    return call


@case("getitem_1000")
def _():
    """1000 row reads x[i] of a [64, 32] tensor that takes no gradient (per-call cost)."""
    x = tensor(64, 32, grad=False)
    return lambda: [x[i % 64] for i in range(1000)]


@case("scale_1000")
def _():
    """1000 products x * 2 of a [64, 32] tensor that takes a gradient (per-call cost, recorded)."""
    x = tensor(64, 32)
    return lambda: [x * 2 for _ in range(1000)]


@case("multinomial")
def _():
    """10 draws with replacement from each of 500 rows of 50 weights."""
    weights = P.to_tensor(np.random.RandomState(0).rand(500, 50).astype("float32"))
    return lambda: P.multinomial(weights, 10, replacement=True)


@case("categorical_sample")
def _():
    """Categorical over a [500, 50] batch of logits, sample([10])."""
    law = P.distribution.Categorical(tensor(500, 50, grad=False))
    return lambda: law.sample([10])


def photo(height: int = 256, width: int = 320) -> np.ndarray:
    """A [height, width, 3] uint8 image (by default a decoded photo's size); the same bytes in both
    libraries. Paddle's transforms take arrays through OpenCV: its interpreter needs
    opencv-python(-headless)."""
    return (np.random.RandomState(0).rand(height, width, 3) * 255).astype("uint8")


def transformed(transform_of: Callable[[object], object], size: Tuple[int, int] = (256, 320)) -> Call:
    """The call that applies ``transform_of(paddle.vision.transforms)`` to ``photo(*size)``; the
    random transforms draw from NumPy's and Python's generators, seeded once."""
    np.random.seed(0)
    import random
    random.seed(0)
    transform, img = transform_of(P.vision.transforms), photo(*size)
    return lambda: transform(img)


@case("transforms_resize")
def _():
    return transformed(lambda T: T.Resize(224))


@case("transforms_resize_modes_720p")
def _():
    """A 720p frame to 224 x 224 by 'bicubic', 'area' and 'lanczos' (a probe found them far slower)."""
    resizes = [transformed(lambda T, mode=mode: T.Resize((224, 224), interpolation=mode), (720, 1280))
               for mode in ("bicubic", "area", "lanczos")]
    return lambda: [resize() for resize in resizes]


@case("transforms_resize_nearest_720p")
def _():
    """A 720p frame enlarged 1.5x by 'nearest' (a probe found it 18x Paddle's time)."""
    return transformed(lambda T: T.Resize((1080, 1920), interpolation="nearest"), (720, 1280))


@case("transforms_rotation")
def _():
    return transformed(lambda T: T.RandomRotation(15))


@case("transforms_color_jitter")
def _():
    return transformed(lambda T: T.ColorJitter(0.4, 0.4, 0.4, 0.1))


@case("transforms_train_pipeline")
def _():
    """ImageNet-style training augmentation of one image, to a normalised CHW tensor."""
    return transformed(lambda T: T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(),
                                            T.ColorJitter(0.4, 0.4, 0.4, 0.1), T.ToTensor(),
                                            T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])]))


@case("resize_1080p")
def _():
    """A 1920 x 1080 frame halved."""
    return transformed(lambda T: T.Resize((540, 960)), (1080, 1920))


@case("grayscale3_1080p")
def _():
    return transformed(lambda T: T.Grayscale(3), (1080, 1920))


@case("color_jitter_1080p")
def _():
    return transformed(lambda T: T.ColorJitter(0.4, 0.4, 0.4, 0.1), (1080, 1920))


@case("interpolate_bilinear")
def _():
    """A batch of 8 [3, 256, 320] images resized to [224, 280], forward and backward."""
    x = tensor(8, 3, 256, 320)
    return sum_backward(lambda: P.nn.functional.interpolate(x, size=[224, 280], mode="bilinear"))


@case("fft_1m")
def _():
    """The FFT of 2**20 complex64 points, forward and backward (of the real part's sum)."""
    data = np.random.RandomState(0).randn(2, 1 << 20).astype("float32")
    x = P.to_tensor((data[0] + 1j * data[1]).astype("complex64"), stop_gradient=False)
    return sum_backward(lambda: P.real(P.fft.fft(x)))


@case("rfft2_1024")
def _():
    """rfft2 of 4 [1024, 1024] float32 images, forward and backward (of the magnitudes' sum)."""
    x = tensor(4, 1024, 1024)
    return sum_backward(lambda: P.abs(P.fft.rfft2(x)))


@case("mode_rows")
def _():
    """mode along the rows of a [1000, 1000] float32 tensor of 100 distinct values."""
    x = P.to_tensor((np.random.RandomState(0).randint(0, 100, (1000, 1000))).astype("float32"))
    return lambda: P.mode(x, axis=1)


@case("cumprod_dim0")
def _():
    """cumprod of [1000, 1000] along its first axis, forward only (Paddle 3.3.1's CPU backward of it
    ran for minutes)."""
    x = P.to_tensor(np.random.RandomState(0).uniform(0.9, 1.1, (1000, 1000)).astype("float32"))
    return lambda: P.cumprod(x, dim=0)


@case("combinations_300")
def _():
    """The 44 850 pairs of 300 elements."""
    x = tensor(300, grad=False)
    return lambda: P.combinations(x, 2)


@case("topk_small_1000")
def _():
    """1000 calls of topk(k=3) on an [8, 16] tensor (the per-call cost)."""
    x = tensor(8, 16, grad=False)

    def call():
        for _ in range(1000):
            P.topk(x, 3)
    return call


def boxes(n: int, seed: int) -> np.ndarray:
    """n float32 boxes (x1, y1, x2, y2) in a 100 x 100 image, 5 to 105 wide."""
    b = np.random.RandomState(seed).rand(n, 4).astype("float32") * 100
    b[:, 2:] += b[:, :2] + 5
    return b


@case("nms_1000")
def _():
    """Greedy NMS (IoU 0.5) of 1000 scored boxes."""
    b, s = P.to_tensor(boxes(1000, 0)), P.to_tensor(np.random.RandomState(1).rand(1000).astype("float32"))
    return lambda: P.vision.ops.nms(b, iou_threshold=0.5, scores=s)


@case("matrix_nms")
def _():
    """matrix_nms of 4 images' 100 boxes under 80 classes' scores."""
    rs = np.random.RandomState(0)
    b = rs.rand(4, 100, 4).astype("float32")
    b[..., 2:] = b[..., :2] + 0.5
    bb, sc = P.to_tensor(b), P.to_tensor(rs.rand(4, 80, 100).astype("float32"))
    return lambda: P.vision.ops.matrix_nms(bb, sc, score_threshold=0.5, post_threshold=0.1, nms_top_k=400,
                                           keep_top_k=200, normalized=False)


@case("psroi_pool")
def _():
    """psroi_pool (output 4) of 64 rois over [2, 256, 32, 32], forward and backward."""
    rs = np.random.RandomState(0)
    rb = rs.rand(64, 4).astype("float32") * 20
    rb[:, 2:] += rb[:, :2] + 4
    x, rois = tensor(2, 256, 32, 32), P.to_tensor(rb)
    counts = P.to_tensor(np.array([32, 32], "int32"))
    return sum_backward(lambda: P.vision.ops.psroi_pool(x, rois, counts, output_size=4))


def segments(count: int):
    rs = np.random.RandomState(0)
    return (P.to_tensor(rs.rand(100_000, 64).astype("float32")),
            P.to_tensor(np.sort(rs.randint(0, count, 100_000)).astype("int64")))


@case("segment_sum_50k")
def _():
    """segment_sum of 100 000 rows of 64 into 50 000 segments."""
    x, ids = segments(50_000)
    return lambda: P.geometric.segment_sum(x, ids)


@case("segment_max_500")
def _():
    """segment_max of 100 000 rows of 64 into 500 segments."""
    x, ids = segments(500)
    return lambda: P.geometric.segment_max(x, ids)


@case("small_ops_8x16")
def _():
    """Five small ops with a gradient recorded, on [8, 16]: mean along an axis, transpose,
    matmul with transpose_y, split in two, concat of two (the per-call cost, not the arithmetic)."""
    x = tensor(8, 16)

    def call():
        x.mean(axis=0)
        x.transpose([1, 0])
        P.matmul(x, x, transpose_y=True)
        P.split(x, 2, axis=1)
        P.concat([x, x], axis=0)
    return call


@case("stft_backward_64k")
def _():
    """stft (n_fft 512, hop 128, centred: reflect-padded) of 64 000 samples, forward and backward
    of its magnitudes' sum."""
    x = tensor(64000)
    return lambda: P.signal.stft(x, 512, 128).abs().sum().backward()


@case("mvn_log_prob")
def _():
    """MultivariateNormal (d = 100) log_prob of 20 000 values."""
    rs = np.random.RandomState(0)
    a = rs.randn(100, 100).astype("float32") / 10
    scale = np.tril(a, -1) + np.diag(1.0 + np.abs(np.diag(a)))
    dist = P.distribution.MultivariateNormal(P.to_tensor(np.zeros(100, "float32")), scale_tril=P.to_tensor(scale))
    v = tensor(20000, 100, grad=False)
    return lambda: dist.log_prob(v)


@case("radam_step_4m")
def _():
    """RAdam.step of one 4 M-element parameter."""
    w = P.create_parameter([4_000_000], "float32")
    opt = P.optimizer.RAdam(0.001, parameters=[w])
    (w * w).sum().backward()
    return opt.step


@case("batch_norm_nhwc")
def _():
    """BatchNorm2D(64, data_format='NHWC') training on [8, 56, 56, 64], forward and backward."""
    return layer_call(P.nn.BatchNorm2D(64, data_format="NHWC"), tensor(8, 56, 56, 64))


@case("batch_norm1d_4096x512")
def _():
    """BatchNorm1D(512) training on [4096, 512] (an MLP head's), forward and backward."""
    return layer_call(P.nn.BatchNorm1D(512), tensor(4096, 512))


@case("max_pool2d_mask")
def _():
    """max_pool2d(3, 2, 1, return_mask=True) of [8, 64, 56, 56] (a ResNet stem's), forward and backward."""
    x = tensor(8, 64, 56, 56)
    return sum_backward(lambda: P.nn.functional.max_pool2d(x, 3, 2, 1, return_mask=True))


@case("max_pool3d")
def _():
    """MaxPool3D(3, 2, 1) of [4, 32, 32, 64, 64] (a video or volume model's), forward and backward."""
    return layer_call(P.nn.MaxPool3D(3, 2, 1), tensor(4, 32, 32, 64, 64))


@case("avg_pool3d")
def _():
    """AvgPool3D(3, 2, 1) of [4, 32, 32, 64, 64], forward and backward."""
    return layer_call(P.nn.AvgPool3D(3, 2, 1), tensor(4, 32, 32, 64, 64))


@case("conv2d_stem_7x7")
def _():
    """Conv2D(3, 64, 7, stride=2, padding=3) of [32, 3, 224, 224] (a ResNet stem), forward and backward."""
    return layer_call(P.nn.Conv2D(3, 64, 7, stride=2, padding=3), tensor(32, 3, 224, 224))


@case("conv3d_transpose_ndhwc")
def _():
    """Conv3DTranspose(16, 16, 3, stride=2, data_format='NDHWC') of [2, 32, 32, 16, 16], forward and backward."""
    return layer_call(P.nn.Conv3DTranspose(16, 16, 3, stride=2, data_format="NDHWC"), tensor(2, 32, 32, 16, 16))


@case("max_unpool2d")
def _():
    """max_pool2d(2, 2, return_mask=True) then max_unpool2d of [8, 64, 56, 56], forward and backward."""
    x = tensor(8, 64, 56, 56)

    def forward():
        pooled, mask = P.nn.functional.max_pool2d(x, 2, 2, return_mask=True)
        return P.nn.functional.max_unpool2d(pooled, mask, 2)
    return sum_backward(forward)


@case("adaptive_max_pool2d_7")
def _():
    """adaptive_max_pool2d of [8, 64, 56, 56] to 7 x 7, forward and backward."""
    x = tensor(8, 64, 56, 56)
    return sum_backward(lambda: P.nn.functional.adaptive_max_pool2d(x, 7))


@case("hfft_c128")
def _():
    """hfft of complex128 [16, 256, 129] along the last axis, forward only."""
    rs = np.random.RandomState(0)
    c = P.to_tensor(rs.randn(16, 256, 129) + 1j * rs.randn(16, 256, 129))
    return lambda: P.fft.hfft(c)


@case("nms_6000")
def _():
    """nms (threshold 0.7) of 6000 scored boxes: an RPN's pre-NMS count, most of them kept."""
    rs = np.random.RandomState(0)
    xy = rs.rand(6000, 2).astype("float32") * 1000
    boxes = P.to_tensor(np.concatenate([xy, xy + rs.rand(6000, 2).astype("float32") * 100 + 5], 1))
    scores = P.to_tensor(rs.rand(6000).astype("float32"))
    return lambda: P.vision.ops.nms(boxes, 0.7, scores=scores)


@case("roi_pool_512")
def _():
    """roi_pool (7 x 7) of 512 rois over [2, 256, 50, 50], forward and backward."""
    rs = np.random.RandomState(0)
    xy = rs.rand(512, 2).astype("float32") * 35
    rois = P.to_tensor(np.concatenate([xy, xy + rs.rand(512, 2).astype("float32") * 15 + 1], 1))
    x, counts = tensor(2, 256, 50, 50), P.to_tensor(np.array([256, 256], "int32"))
    return sum_backward(lambda: P.vision.ops.roi_pool(x, rois, counts, 7, 1.0))


@case("yolo_loss_3heads")
def _():
    """yolo_loss of YOLOv3's three heads (13/26/52 cells, 80 classes) at batch 4 against 20 of
    50 ground-truth slots, forward and backward."""
    rs = np.random.RandomState(0)
    anchors = [10, 13, 16, 30, 33, 23, 30, 61, 62, 45, 59, 119, 116, 90, 156, 198, 373, 326]
    gt = np.zeros((4, 50, 4), "float32")
    gt[:, :20, :2] = rs.rand(4, 20, 2) * 0.8 + 0.1
    gt[:, :20, 2:] = rs.rand(4, 20, 2) * 0.3 + 0.02
    boxes, labels = P.to_tensor(gt), P.to_tensor(rs.randint(0, 80, (4, 50)).astype("int32"))
    heads = [(13, [6, 7, 8], 32), (26, [3, 4, 5], 16), (52, [0, 1, 2], 8)]
    xs = [P.to_tensor(rs.randn(4, 255, s, s).astype("float32") * 0.5, stop_gradient=False) for s, _, _ in heads]

    def call():
        total = sum(P.vision.ops.yolo_loss(x, boxes, labels, anchors, mask, 80, 0.7, ratio).mean()
                    for x, (_, mask, ratio) in zip(xs, heads))
        total.backward()
    return call


@case("triangular_solve_2000")
def _():
    """triangular_solve of one upper-triangular 2000 x 2000 system, one right-hand side."""
    rs = np.random.RandomState(0)
    a = np.triu(rs.randn(2000, 2000)).astype("float32") + 45 * np.eye(2000, dtype="float32")
    x, y = P.to_tensor(a), P.to_tensor(rs.randn(2000, 1).astype("float32"))
    return lambda: P.linalg.triangular_solve(x, y, upper=True)


@case("cube_256")
def _():
    """x ** 3 of a [256, 256] standard-normal float32 tensor (half its bases negative), forward
    and backward."""
    x = tensor(256, 256)
    return sum_backward(lambda: x ** 3)


@case("unique_2e6_ints")
def _():
    """unique of 2 000 000 int64 values below 50 (the values alone)."""
    x = ints(50, 2_000_000)
    return lambda: P.unique(x)


@case("scatter_1e6_into_1e7")
def _():
    """scatter (overwrite) of 1 000 000 float32 values at random, repeating, indices of 10 000 000."""
    rs = np.random.RandomState(2)
    x = P.zeros([10_000_000], dtype="float32")
    index = P.to_tensor(rs.randint(0, 10_000_000, 1_000_000).astype("int64"))
    updates = P.to_tensor(rs.rand(1_000_000).astype("float32"))
    return lambda: P.scatter(x, index, updates)


@case("multinomial_64x50000_n10")
def _():
    """multinomial of 10 draws without replacement from each of 64 rows of 50 000 weights (a
    vocabulary's softmax)."""
    weights = P.nn.functional.softmax(tensor(64, 50_000, grad=False), -1)
    return lambda: P.multinomial(weights, 10)


@case("i0e_1e6")
def _():
    """i0e of 1 000 000 float32 values in (0.1, 5.1), forward and backward."""
    x = P.to_tensor(np.random.RandomState(0).rand(1000, 1000).astype("float32") * 5 + 0.1, stop_gradient=False)
    return sum_backward(lambda: P.i0e(x))


@case("heaviside_1e6")
def _():
    """heaviside of 1 000 000 float32 values against a tensor of 0.5s."""
    x, y = tensor(1000, 1000, grad=False), P.full([1000, 1000], 0.5)
    return lambda: P.heaviside(x, y)


@case("remainder_1e6")
def _():
    """remainder of 1 000 000 float32 values by positive divisors, forward and backward."""
    rs = np.random.RandomState(0)
    x = P.to_tensor(rs.rand(1000, 1000).astype("float32") * 1.8 - 0.9, stop_gradient=False)
    y = P.to_tensor(rs.rand(1000, 1000).astype("float32") * 5 + 0.1, stop_gradient=False)
    return sum_backward(lambda: P.remainder(x, y))


@case("maxout_nhwc")
def _():
    """maxout(groups=2, axis=-1) of [16, 56, 56, 256] float32 (NHWC), forward and backward."""
    x = tensor(16, 56, 56, 256)
    return sum_backward(lambda: P.nn.functional.maxout(x, 2, axis=-1))


@case("log_sigmoid_64x128x512")
def _():
    x = tensor(64, 128, 512)
    return sum_backward(lambda: P.nn.functional.log_sigmoid(x))


@case("ema_inplace_1e6")
def _():
    """An EMA update in place, e.scale_(0.99).add_(p * 0.01), of 1 000 000 float32 weights under
    no_grad (the per-step cost of a model average)."""
    e, w = tensor(1000, 1000, grad=False), tensor(1000, 1000, grad=False, seed=1)

    def call():
        with P.no_grad():
            e.scale_(0.99).add_(w * 0.01)
    return call


@case("layer_norm_infer_4096x1024")
def _():
    """LayerNorm(1024) of [4096, 1024] float32 under no_grad (inference), forward only."""
    layer, x = P.nn.LayerNorm(1024), tensor(4096, 1024, grad=False)

    def call():
        with P.no_grad():
            layer(x)
    return call


@case("unbind_rnn_loop_1024")
def _():
    """An RNN-style loop over ``unbind(x, axis=1)`` of x [16, 1024, 64] and the backward: each
    step's slice gradient goes back through unbind."""
    x = tensor(16, 1024, 64)

    def call():
        h = P.zeros([16, 64])
        for xt in P.unbind(x, axis=1):
            h = P.tanh(h + xt)
        h.sum().backward()
    return call


@case("clip_global_norm_4x1024x1024")
def _():
    """``ClipGradByGlobalNorm(1.0)`` called on 4 gradients of [1024, 1024] (the norm, then the scaling)."""
    params = [P.create_parameter([1024, 1024], "float32") for _ in range(4)]
    pairs = [(p, tensor(1024, 1024, grad=False, seed=i)) for i, p in enumerate(params)]
    clip = P.nn.ClipGradByGlobalNorm(1.0)
    return lambda: clip(pairs)


@case("roi_align_512_rois")
def _():
    """``vision.ops.roi_align`` of 512 boxes (up to half the image) on features [2, 256, 50, 68]
    at 1/16 scale, 7 x 7 bins, sampling_ratio 2 (a detector's second stage), forward only."""
    rng = np.random.default_rng(8)
    corner, size = rng.random((512, 2)) * 800, rng.random((512, 2)) * 400 + 1
    x = P.to_tensor(rng.random((2, 256, 50, 68), dtype=np.float32))
    boxes = P.to_tensor(np.concatenate([corner, corner + size], 1).astype(np.float32))
    counts = P.to_tensor(np.array([256, 256], np.int32))
    return lambda: P.vision.ops.roi_align(x, boxes, counts, 7, 1 / 16.0, sampling_ratio=2)


@case("psroi_pool_512_rois")
def _():
    """``vision.ops.psroi_pool`` of 512 boxes on features [2, 490, 50, 68] (10 channels of 7 x 7
    bins) at 1/16 scale, forward and backward (R-FCN's head)."""
    rng = np.random.default_rng(8)
    corner, size = rng.random((512, 2)) * 800, rng.random((512, 2)) * 400 + 1
    x = P.to_tensor(rng.random((2, 490, 50, 68), dtype=np.float32), stop_gradient=False)
    boxes = P.to_tensor(np.concatenate([corner, corner + size], 1).astype(np.float32))
    counts = P.to_tensor(np.array([256, 256], np.int32))
    return sum_backward(lambda: P.vision.ops.psroi_pool(x, boxes, counts, 7, 1 / 16.0))


@case("sparse_subm_conv3d_4_points")
def _():
    """``sparse.nn.functional.subm_conv3d`` of a point cloud of 4 points in [1, 4, 4, 4] with 3
    channels by a 3 x 3 x 3 kernel to 4 (the per-call cost of a sparse convolution)."""
    indices = np.array([[0, 0, 0, 0], [0, 1, 2, 3], [1, 2, 3, 0], [2, 3, 0, 1]])
    x = P.sparse.sparse_coo_tensor(indices, np.ones((4, 3), np.float32), [1, 4, 4, 4, 3])
    weight = tensor(3, 3, 3, 3, 4, grad=False)
    return lambda: P.sparse.nn.functional.subm_conv3d(x, weight)


def _random_graph(nodes: int, edges: int):
    """A random graph in CSC form (row, colptr) and ``nodes // 10`` distinct input nodes."""
    rng = np.random.default_rng(0)
    dst = np.sort(rng.integers(0, nodes, edges))
    colptr = np.concatenate([[0], np.cumsum(np.bincount(dst, minlength=nodes))])
    inputs = rng.choice(nodes, nodes // 10, replace=False)
    return P.to_tensor(rng.integers(0, nodes, edges)), P.to_tensor(colptr), P.to_tensor(inputs)


@case("sample_neighbors_1e4_of_1e5")
def _():
    """``geometric.sample_neighbors``: 10 neighbors of each of 1e4 input nodes of a random graph of
    1e5 nodes and 1e6 edges."""
    row, colptr, inputs = _random_graph(100_000, 1_000_000)
    return lambda: P.geometric.sample_neighbors(row, colptr, inputs, sample_size=10)


@case("reindex_graph_1e4_nodes")
def _():
    """``geometric.reindex_graph`` of 1e4 input nodes with 10 sampled neighbors each (ids below
    1e5)."""
    rng = np.random.default_rng(1)
    x = P.to_tensor(rng.choice(100_000, 10_000, replace=False))
    neighbors = P.to_tensor(rng.integers(0, 100_000, 100_000))
    count = P.to_tensor(np.full(10_000, 10, np.int32))
    return lambda: P.geometric.reindex_graph(x, neighbors, count)


# -- worker: times the cases in one library ------------------------------------------------------

def best_ms(call: Call, repeats: int) -> float:
    """The fastest of ``repeats`` calls after one untimed warm-up call, in milliseconds."""
    call()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def worker(library: str, names: List[str], repeats: int) -> None:
    """Prints one JSON line per case: {"case", "ms"} or {"case", "error"}; a first line gives the
    library's version."""
    global P
    if library == "paddle":
        import paddle as P
    else:
        import pycoll as P
    P.seed(0)
    print(json.dumps({"library": library, "version": P.__version__}), flush=True)
    for name in names:
        try:
            ms = best_ms(CASES[name](), repeats)
            print(json.dumps({"case": name, "ms": round(ms, 3)}), flush=True)
        except Exception as exc:  # a case a library lacks: reported in its cell, the others go on
            print(json.dumps({"case": name, "error": f"{type(exc).__name__}: {exc}"[:200]}), flush=True)


# -- driver ---------------------------------------------------------------------------------------

def run_worker(python: str, library: str, names: List[str], repeats: int, threads: int) -> dict:
    """One worker process; returns {"version", "ms": {case: ms}, "errors": {case: message}}."""
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "OPENBLAS_NUM_THREADS": str(threads),
           "MKL_NUM_THREADS": str(threads), "GLOG_minloglevel": "2"}
    argv = [python, os.path.abspath(__file__), "--worker", library, "--cases", ",".join(names),
            "--repeats", str(repeats)]
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=900)
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"the {library} worker failed ({proc.returncode}):\n{proc.stdout}{proc.stderr[-2000:]}")
    result = {"version": lines[0]["version"], "ms": {}, "errors": {}}
    for line in lines[1:]:
        if "ms" in line:
            result["ms"][line["case"]] = line["ms"]
        else:
            result["errors"][line["case"]] = line["error"]
    return result


def peer_problem(python: Optional[str]) -> Optional[str]:
    """Why the Paddle column cannot be measured with ``python`` (None: it can)."""
    if python is None:
        return "no --peer-python given"
    if not os.path.exists(python):
        return f"--peer-python {python} does not exist"
    probe = subprocess.run([python, "-c", "import paddle"], capture_output=True, text=True,
                           env={**os.environ, "GLOG_minloglevel": "2"})
    if probe.returncode != 0:
        return f"--peer-python {python} cannot import paddle: {probe.stderr.strip().splitlines()[-1:]}"
    return None


def machine() -> str:
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as info:
            model = next(line.split(":", 1)[1].strip() for line in info if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{model}, {os.cpu_count()} CPUs, Python {platform.python_version()}, NumPy {np.__version__}"


def cell(result: Optional[dict], name: str) -> str:
    if result is None:
        return "skipped"
    if name in result["ms"]:
        return f"{result['ms'][name]:.2f}"
    return "error"


def table(names: List[str], best: Dict[str, Optional[dict]]) -> List[str]:
    rows = ["| case | Paddle ms | pycoll ms | pycoll / Paddle |", "|---|---:|---:|---:|"]
    for name in names:
        ours, theirs = (best[lib]["ms"].get(name) if best[lib] else None for lib in ("pycoll", "paddle"))
        ratio = f"{ours / theirs:.2f}" if ours is not None and theirs else "—"
        rows.append(f"| {name} | {cell(best['paddle'], name)} | {cell(best['pycoll'], name)} | {ratio} |")
    return rows


def merge_best(runs: List[dict]) -> dict:
    """Each case's fastest over the rounds; errors that no round measured."""
    ms: Dict[str, float] = {}
    for run in runs:
        for name, value in run["ms"].items():
            ms[name] = min(value, ms.get(name, value))
    errors = {name: msg for run in runs for name, msg in run["errors"].items() if name not in ms}
    return {"version": runs[0]["version"], "ms": ms, "errors": errors, "rounds": [r["ms"] for r in runs]}


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peer-python", default=None,
                        help="the python of a venv with paddlepaddle (absent: the Paddle column is skipped)")
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated case names (default: all)")
    parser.add_argument("--rounds", type=int, default=2, help="worker processes per library (default 2)")
    parser.add_argument("--repeats", type=int, default=5, help="timed calls per case after a warm-up (default 5)")
    parser.add_argument("--threads", type=int, default=1, help="OMP/OpenBLAS/MKL threads per worker (default 1)")
    parser.add_argument("--json", default=None, help="also write the measurements to this file")
    parser.add_argument("--worker", choices=("paddle", "pycoll"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.cases = [name for name in args.cases.split(",") if name]
    unknown = [name for name in args.cases if name not in CASES]
    if unknown or not args.cases:
        parser.error(f"--cases: got {unknown or 'none'}, needs names among {', '.join(CASES)}")
    for flag in ("rounds", "repeats", "threads"):
        if getattr(args, flag) < 1:
            parser.error(f"--{flag}: got {getattr(args, flag)}, needs an integer >= 1")
    return args


def main(argv: Optional[List[str]] = None) -> None:
    args = parse_args(argv)
    if args.worker:
        worker(args.worker, args.cases, args.repeats)
        return
    skipped = peer_problem(args.peer_python)
    if skipped:
        print(f"# Paddle column skipped: {skipped}", flush=True)
    pythons = {"pycoll": sys.executable, "paddle": None if skipped else args.peer_python}
    runs: Dict[str, List[dict]] = {lib: [] for lib in pythons}
    for r in range(args.rounds):
        order = ("paddle", "pycoll") if r % 2 == 0 else ("pycoll", "paddle")
        for lib in order:
            if pythons[lib]:
                runs[lib].append(run_worker(pythons[lib], lib, args.cases, args.repeats, args.threads))
    best = {lib: merge_best(r) if r else None for lib, r in runs.items()}
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    versions = ", ".join(f"{lib} {best[lib]['version']}" for lib in ("paddle", "pycoll") if best[lib])
    print(f"# {stamp}; {machine()}; {versions}; {args.threads} OMP/OpenBLAS/MKL thread(s) per worker; "
          f"best of {args.repeats} calls after a warm-up, best over {args.rounds} round(s) of one process "
          f"per library (alternating which goes first)")
    print("\n".join(table(args.cases, best)))
    for lib in ("paddle", "pycoll"):
        for name, msg in (best[lib] or {"errors": {}})["errors"].items():
            print(f"# {lib} {name}: {msg}")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"date": stamp, "machine": machine(), "threads": args.threads, "repeats": args.repeats,
                       "rounds": args.rounds, "peer_skipped": skipped, "cases": args.cases, **best},
                      out, indent=1)


if __name__ == "__main__":
    main()

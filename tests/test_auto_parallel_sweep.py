"""Every public tensor function of pycoll on Shard(0)/Shard(1) distributed tensors of 2 ranks
against the same call on the whole array (tests/ranks/auto_parallel_sweep.py, one launch of
about 5 s): each call must give the whole call's values and shapes, or be refused by name
(pycoll's Refused) where ``REFUSED`` allows it. A wrong value, a wrong shape or a crash is never
allowed; an allowed op that now computes must leave the list."""
import json
from collections import Counter

from conftest import assert_ok, launch

# the ops still refused on a split operand (by name, in-place forms with them), each with why
REFUSED = {
    "interpolate": "no rule: resizes the spatial dimensions (a batch split could stay)",
    "upsample": "interpolate's",
    "label_smooth": "no rule: mixes in a prior over the classes",
    "local_response_norm": "no rule: sums across neighbouring channels",
    "lp_pool1d": "pads its input first (pad has no rule)",
    "lp_pool2d": "pads its input first (pad has no rule)",
    "pad": "no rule: the padding would land on every piece",
    "zeropad2d": "pad's",
    "normalize": "no rule: divides by a norm over an axis",
    "prelu": "no rule: a per-channel weight",
    "rrelu": "draws a whole-shaped slope beside a split input",
    "unfold": "no rule: sliding blocks across the spatial dimensions",
    "argwhere": "nonzero's",
    "nonzero": "no rule: a data-dependent number of rows",
    "masked_select": "no rule: a data-dependent length",
    "unique": "no rule: a data-dependent length",
    "unique_consecutive": "no rule: a data-dependent length",
    "as_strided": "no rule: strides address the whole memory",
    "corrcoef": "cov's",
    "cov": "no rule: both matmul operands split along the observations",
    "count_nonzero": "no rule for its reduction",
    "fill_diagonal": "no rule: writes at global diagonal positions",
    "frexp": "multiplies by a whole-shaped tensor it builds",
    "gather_nd": "no rule: the index addresses the whole tensor",
    "take": "no rule: flat indices address the whole tensor",
    "index_fill": "no rule yet (writes slices at global indices)",
    "index_put": "no rule yet (writes at global indices)",
    "masked_fill": "no rule yet (mask and value beside a split input)",
    "masked_scatter": "no rule: consumes its source in the whole tensor's order",
    "isin": "no rule yet (the test elements are whole)",
    "numel": "no rule: a shape query (the whole size)",
    "shape": "no rule: a shape query (the whole shape)",
    "rank": "no rule: a shape query",
    "renorm": "no rule: norms of sub-tensors across the split",
    "rot90": "no rule: moves the split between dimensions",
    "einsum": "no rule for its subscripts",
    **{name: "no rule: a transform along the split dimension (the fft family)" for name in (
        "fft", "fft2", "fftn", "ifft", "ifft2", "ifftn", "rfft", "rfft2", "rfftn", "irfft", "irfft2", "irfftn",
        "hfft", "hfft2", "hfftn", "ihfft", "ihfft2", "ihfftn")},
}


def _op(full_name):
    return full_name.split(".", 1)[1].rstrip("_")


def test_every_op_on_split_tensors_equals_the_whole_array_call_or_is_refused_by_name(tmp_path):
    out = tmp_path / "sweep.json"
    assert_ok(launch(2, "auto_parallel_sweep.py", str(out), timeout=120), expect_lines=2)
    results = json.loads(out.read_text())
    counts = Counter(status for _, _, status, _ in results)
    assert counts["ok"] > 1500, counts  # the sweep reached the ops (some 1680 calls compute)
    broken = [r for r in results if r[2] in ("wrong", "shape", "crash")]
    assert not broken, "wrong values, wrong shapes or crashes:\n" + "\n".join(map(str, broken))
    refused = [r for r in results if r[2] == "refused"]
    unlisted = [r for r in refused if _op(r[0]) not in REFUSED]
    assert not unlisted, "refused but not allow-listed:\n" + "\n".join(map(str, unlisted))
    stale = sorted(set(REFUSED) - {_op(r[0]) for r in refused})
    assert not stale, f"these compute now; take them off REFUSED: {stale}"

"""Every public tensor function of pycoll on Shard(0)/Shard(1) distributed tensors of 2 ranks
against the same call on the whole array (tests/ranks/auto_parallel_sweep.py, one launch of
about 5 s): each call must give the whole call's values and shapes, or be refused by name
(pycoll's Refused) where ``REFUSED`` allows it (nothing, now). A wrong value, a wrong shape or a
crash is never allowed; an allowed op that now computes must leave the list."""
import json
from collections import Counter

from conftest import assert_ok, launch

# the ops still refused on a split operand (by name, in-place forms with them), each with why: none
# now (pad, interpolate, the fft family, masked_*, unique, nonzero, einsum, numel/shape... compute)
REFUSED: dict = {}


def _op(full_name):
    return full_name.split(".", 1)[1].rstrip("_")


def test_every_op_on_split_tensors_equals_the_whole_array_call_or_is_refused_by_name(tmp_path):
    out = tmp_path / "sweep.json"
    assert_ok(launch(2, "auto_parallel_sweep.py", str(out), timeout=120), expect_lines=2)
    results = json.loads(out.read_text())
    counts = Counter(status for _, _, status, _ in results)
    assert counts["ok"] > 1800, counts  # the sweep reached the ops (some 1860 calls compute)
    broken = [r for r in results if r[2] in ("wrong", "shape", "crash")]
    assert not broken, "wrong values, wrong shapes or crashes:\n" + "\n".join(map(str, broken))
    refused = [r for r in results if r[2] == "refused"]
    unlisted = [r for r in refused if _op(r[0]) not in REFUSED]
    assert not unlisted, "refused but not allow-listed:\n" + "\n".join(map(str, unlisted))
    stale = sorted(set(REFUSED) - {_op(r[0]) for r in refused})
    assert not stale, f"these compute now; take them off REFUSED: {stale}"

"""pycoll.text: viterbi_decode / ViterbiDecoder against an exhaustive NumPy search and paddle's values."""
import itertools

import numpy as np
import pytest

import pycoll
from pycoll.text import ViterbiDecoder, viterbi_decode


def brute_force(pot, trans, n, with_tags):
    """The best (score, tags) of one sequence of length n over every tag sequence: start tag's row
    (last) at step 0 and stop tag's row (second to last) at step n-1 when with_tags, as paddle's."""
    best = (-np.inf, None)
    for seq in itertools.product(range(pot.shape[1]), repeat=n):
        score = pot[0, seq[0]] + sum(trans[a, b] + pot[t + 1, b] for t, (a, b) in enumerate(zip(seq, seq[1:])))
        if with_tags:
            score += trans[-1, seq[0]] + trans[-2, seq[-1]]
        best = max(best, (score, seq))
    return best


@pytest.mark.parametrize("with_tags", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_viterbi_decode_finds_the_best_path(with_tags, dtype):
    rng = np.random.default_rng(3)
    batch, steps, tags = 4, 5, 4
    pot = rng.normal(size=(batch, steps, tags)).astype(dtype)
    trans = rng.normal(size=(tags, tags)).astype(dtype)
    lengths = np.array([5, 3, 1, 4], np.int64)
    scores, paths = viterbi_decode(pycoll.to_tensor(pot), pycoll.to_tensor(trans), pycoll.to_tensor(lengths),
                                   with_tags)
    assert scores.dtype == pot.dtype and paths.dtype == pycoll.int64 and paths.shape == [batch, 5]
    for b, n in enumerate(lengths):
        score, seq = brute_force(pot[b].astype(np.float64), trans.astype(np.float64), n, with_tags)
        np.testing.assert_allclose(scores.numpy()[b], score, rtol=1e-5)
        assert paths.numpy()[b, :n].tolist() == list(seq)
        assert not paths.numpy()[b, n:].any()  # paddle pads a short sequence's path with 0


def test_viterbi_decode_matches_paddle():
    pot = np.array([[[0.5, -1.0, 2.0], [1.0, 0.0, -0.5]]] * 2, np.float32)
    trans = np.array([[0.1, 0.2, 0.3], [0.4, -0.5, 0.6], [-0.7, 0.8, 0.9]], np.float32)
    lengths = pycoll.to_tensor(np.array([1, 2], np.int64))
    # paddle 3.3.1 CPU: with tags [3.5, 3.9] [[2, 0], [2, 2]], without [2.0, 2.8] [[2, 0], [2, 1]]
    for with_tags, want_scores, want_paths in ((True, [3.5, 3.9], [[2, 0], [2, 2]]),
                                                (False, [2.0, 2.8], [[2, 0], [2, 1]])):
        decoder = ViterbiDecoder(pycoll.to_tensor(trans), include_bos_eos_tag=with_tags)
        scores, paths = decoder(pycoll.to_tensor(pot), lengths)
        np.testing.assert_allclose(scores.numpy(), want_scores, rtol=1e-6)
        assert paths.numpy().tolist() == want_paths


def test_viterbi_decode_refuses_bad_input():
    pot, trans = pycoll.rand([2, 3, 4]), pycoll.rand([4, 4])
    with pytest.raises(ValueError, match=r"lengths must lie in \[1, 3\]"):
        viterbi_decode(pot, trans, pycoll.to_tensor(np.array([0, 2], np.int64)))
    with pytest.raises(ValueError, match="int64"):
        viterbi_decode(pot, trans, pycoll.to_tensor(np.array([1, 2], np.int32)))
    with pytest.raises(ValueError, match=r"transition_params must be \[4, 4\]"):
        viterbi_decode(pot, pycoll.rand([3, 3]), pycoll.to_tensor(np.array([1, 2], np.int64)))
    with pytest.raises(TypeError, match="potentials must be a Tensor"):
        viterbi_decode(pot.numpy(), trans, pycoll.to_tensor(np.array([1, 2], np.int64)))

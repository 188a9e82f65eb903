"""pycoll.text: viterbi_decode / ViterbiDecoder against an exhaustive NumPy search and paddle's values; the
datasets on small local files in paddle's formats."""
import io
import itertools
import tarfile
import zipfile

import numpy as np
import pytest

import pycoll
from pycoll import text
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


# ---- datasets: small files in paddle's formats; expected values measured on paddle 3.3.1 on the same files ----
def _add(archive, name, text):
    data = text.encode("latin-1")
    info = tarfile.TarInfo(name)
    info.size = len(data)
    archive.addfile(info, io.BytesIO(data))


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("text_data")
    np.savetxt(d / "housing.data", (np.arange(70.0) % 11 + np.arange(70.0) ** 1.5 / 50).reshape(5, 14), fmt="%.4f")
    with tarfile.open(d / "aclImdb.tar.gz", "w:gz") as archive:
        _add(archive, "aclImdb/train/pos/0_9.txt", "A good film, a GOOD plot!\n")
        _add(archive, "aclImdb/train/neg/0_1.txt", "bad film. Bad, bad plot\n")
        _add(archive, "aclImdb/test/pos/0_8.txt", "good good acting\n")
        _add(archive, "aclImdb/test/neg/0_2.txt", "a bad film\n")
        _add(archive, "aclImdb/README", "bad bad bad bad")
    with tarfile.open(d / "simple-examples.tgz", "w:gz") as archive:
        _add(archive, "./simple-examples/data/ptb.train.txt", " the cat sat the \n the dog sat on the mat \n")
        _add(archive, "./simple-examples/data/ptb.valid.txt", " a cat ran \n")
        _add(archive, "./simple-examples/data/ptb.test.txt", " the cat ran on <unk> \n the mat \n")
    with zipfile.ZipFile(d / "ml-1m.zip", "w") as z:
        z.writestr("ml-1m/movies.dat", "1::Toy Story (1995)::Animation|Comedy\n2::Heat (1995)::Action|Crime\n")
        z.writestr("ml-1m/users.dat", "1::F::1::10::48067\n2::M::56::16::70072\n")
        z.writestr("ml-1m/ratings.dat", "".join(f"{1 + i % 2}::{1 + i // 2 % 2}::{1 + i % 5}::97830076{i}\n"
                                                for i in range(6)))
    return d


def test_uci_housing(data_dir):
    train = text.UCIHousing(data_file=str(data_dir / "housing.data"))
    test = text.UCIHousing(data_file=str(data_dir / "housing.data"), mode="test")
    assert (len(train), len(test)) == (4, 1)
    features, price = train[0]
    assert features.dtype == np.float32 and features.shape == (13,) and price.shape == (1,)
    np.testing.assert_allclose(features[[0, 5, 10, 12]], [-0.51005965, -0.29864618, 0.04073017, -0.5282442], rtol=1e-6)
    np.testing.assert_allclose(price, [2.9374], rtol=1e-6)
    np.testing.assert_allclose(test[0][0][[0, 12]], [0.13944392, 0.17858416], rtol=1e-6)


def test_imdb(data_dir):
    train = text.Imdb(data_file=str(data_dir / "aclImdb.tar.gz"), cutoff=1)
    assert train.word_idx == {b"bad": 0, b"good": 1, b"a": 2, b"film": 3, b"plot": 4, "<unk>": 5}
    assert [(d.tolist(), y.tolist()) for d, y in (train[0], train[1])] == [([2, 1, 3, 2, 1, 4], [0]),
                                                                          ([0, 3, 0, 0, 4], [1])]
    test = text.Imdb(data_file=str(data_dir / "aclImdb.tar.gz"), mode="test", cutoff=1)
    assert [d.tolist() for d, _ in (test[0], test[1])] == [[1, 1, 5], [2, 0, 3]]


def test_imikolov(data_dir):
    path = str(data_dir / "simple-examples.tgz")
    ngrams = text.Imikolov(data_file=path, data_type="NGRAM", window_size=3, mode="test", min_word_freq=1)
    assert ngrams.word_idx == {b"the": 0, "<e>": 1, "<s>": 2, b"cat": 3, b"sat": 4, "<unk>": 5}
    assert [tuple(x.tolist() for x in ngrams[i]) for i in range(len(ngrams))] == [
        (2, 0, 3), (0, 3, 5), (3, 5, 5), (5, 5, 5), (5, 5, 1), (2, 0, 5), (0, 5, 1)]
    seqs = text.Imikolov(data_file=path, data_type="SEQ", window_size=5, min_word_freq=1)
    assert [tuple(x.tolist() for x in seqs[i]) for i in range(len(seqs))] == [([2, 0, 3, 4, 0], [0, 3, 4, 0, 1])]
    with pytest.raises(ValueError, match="window_size"):
        text.Imikolov(data_file=path, data_type="NGRAM")


def test_movielens(data_dir):
    test = text.Movielens(data_file=str(data_dir / "ml-1m.zip"), mode="test", test_ratio=0.5, rand_seed=1)
    # paddle 3.3.1 put ratings 0, 2, 3, 4, 5 in 'test' and rating 1 in 'train' with this seed (its
    # genre and title-word ids follow a set's order; pycoll's the sorted names)
    assert test.categories_dict == {"Action": 0, "Animation": 1, "Comedy": 2, "Crime": 3}
    assert test.movie_title_dict == {"heat": 0, "story": 1, "toy": 2}
    assert [tuple(x.tolist() for x in test[i]) for i in (0, 1)] == [
        ([1], [1], [0], [10], [1], [1, 2], [2, 1], [-3.0]), ([1], [1], [0], [10], [2], [0, 3], [0], [1.0])]
    assert [test[i][-1].tolist() for i in range(len(test))] == [[-3.0], [1.0], [3.0], [5.0], [-3.0]]
    train = text.Movielens(data_file=str(data_dir / "ml-1m.zip"), test_ratio=0.5, rand_seed=1)
    assert [x.tolist() for x in train[0]] == [[2], [0], [6], [16], [1], [1, 2], [2, 1], [-1.0]]


def test_datasets_never_download(tmp_path, monkeypatch):
    import pycoll.vision.datasets._files as files

    monkeypatch.setattr(files, "DATA_HOME", str(tmp_path))  # an empty download cache
    with pytest.raises(FileNotFoundError, match="does not download"):
        text.Imdb()
    with pytest.raises(ValueError, match="download=False"):
        text.UCIHousing(download=False)
    with pytest.raises(ValueError, match="mode"):
        text.UCIHousing(data_file=str(tmp_path), mode="valid")

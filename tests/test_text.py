"""pycoll.text: viterbi_decode / ViterbiDecoder against an exhaustive NumPy search and paddle's values; the
datasets on small local files in paddle's formats."""
import gzip
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


def test_viterbi_decode_gives_an_empty_sequence_an_all_zero_path():
    """A batch padded with empty sequences (paddle 3.3.1 decodes them too: the same paths; its
    score for one with BOS/EOS tags is its kernel's, pycoll's the 0 of no step)."""
    rs = np.random.RandomState(0)
    pot = pycoll.to_tensor(rs.randn(3, 5, 4).astype("float32"))
    trans = pycoll.to_tensor(rs.randn(4, 4).astype("float32"))
    scores, paths = viterbi_decode(pot, trans, pycoll.to_tensor(np.array([5, 0, 2], np.int64)))
    np.testing.assert_allclose(scores.numpy(), [7.26097, 0.0, 1.4876283], rtol=1e-6)  # paddle: 7.26097, 1.4876283
    assert paths.numpy().tolist() == [[2, 2, 3, 2, 2], [0] * 5, [3, 3, 0, 0, 0]]  # paddle's
    none, empty = viterbi_decode(pot, trans, pycoll.to_tensor(np.array([0, 0, 0], np.int64)))
    assert empty.shape == [3, 0] and none.numpy().tolist() == [0.0, 0.0, 0.0]


def test_viterbi_decode_refuses_bad_input():
    pot, trans = pycoll.rand([2, 3, 4]), pycoll.rand([4, 4])
    with pytest.raises(ValueError, match=r"lengths must lie in \[0, 3\]"):
        viterbi_decode(pot, trans, pycoll.to_tensor(np.array([-1, 2], np.int64)))
    with pytest.raises(ValueError, match=r"lengths must lie in \[0, 3\]"):
        viterbi_decode(pot, trans, pycoll.to_tensor(np.array([4, 2], np.int64)))
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


@pytest.fixture(scope="module")
def translation_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("srl_mt_data")
    words = "The\ncat\nsat\non\nthe\nmat\n.\n\nA\ndog\nran\n.\n\n"
    props = ("-    (A0*   *\nsat  *)     (A1*\n-    (V*)   *\non   (A1*   *)\n-    *      (V*)\n-    *)     *\n"
             "-    *      *\n\n-    (A0*\n-    *)\nran  (V*)\n-    *\n\n")
    with tarfile.open(d / "conll05st-tests.tar.gz", "w:gz") as archive:
        _add_bytes(archive, "conll05st-release/test.wsj/words/test.wsj.words.gz", gzip.compress(words.encode()))
        _add_bytes(archive, "conll05st-release/test.wsj/props/test.wsj.props.gz", gzip.compress(props.encode()))
    (d / "wordDict.txt").write_text("<unk>\nthe\ncat\nsat\non\nmat\n.\ndog\nran\nbos\neos\n")
    (d / "verbDict.txt").write_text("sat\nran\non\n")
    (d / "targetDict.txt").write_text("B-A0\nI-A0\nB-A1\nI-A1\nB-V\nI-V\nO\n")
    (d / "emb").write_text("")
    with tarfile.open(d / "wmt14.tgz", "w:gz") as archive:
        _add(archive, "wmt14/src.dict", "<s>\n<e>\n<unk>\nle\nchat\nest\nnoir\n")
        _add(archive, "wmt14/trg.dict", "<s>\n<e>\n<unk>\nthe\ncat\nis\nblack\n")
        _add(archive, "wmt14/train/train", "le chat est noir\tthe cat is black\nle chien\tthe dog\nbad line\n")
        _add(archive, "wmt14/test/test", "le chat\tthe cat\n")
    with tarfile.open(d / "wmt16.tar.gz", "w:gz") as archive:
        _add(archive, "wmt16/train", "the cat is black\tdie katze ist schwarz\nthe dog is big\tder hund ist gross\n"
                                     "the cat\tdie katze\n")
        _add(archive, "wmt16/test", "the big cat\tdie grosse katze\n")
        _add(archive, "wmt16/val", "a dog\tein hund\n")
    return d


def _add_bytes(archive, name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    archive.addfile(info, io.BytesIO(data))


def test_conll05st(translation_dir):
    d = translation_dir
    data = text.Conll05st(data_file=str(d / "conll05st-tests.tar.gz"), word_dict_file=str(d / "wordDict.txt"),
                          verb_dict_file=str(d / "verbDict.txt"), target_dict_file=str(d / "targetDict.txt"),
                          emb_file=str(d / "emb"))
    # paddle 3.3.1 on these files: 3 (sentence, predicate) samples with these BIO labels and arrays
    assert data.labels == [["B-A0", "I-A0", "B-V", "B-A1", "I-A1", "I-A1", "O"],
                           ["O", "B-A1", "I-A1", "I-A1", "B-V", "O", "O"], ["B-A0", "I-A0", "B-V", "O"]]
    assert data.label_dict == {"B-A0": 0, "I-A0": 1, "B-A1": 2, "I-A1": 3, "B-V": 4, "I-V": 5, "O": 6}
    sample = [x.tolist() for x in data[1]]
    assert sample[:8] == [[0, 2, 3, 4, 1, 5, 6], [3] * 7, [4] * 7, [1] * 7, [5] * 7, [6] * 7, [2] * 7,
                          [0, 0, 1, 1, 1, 1, 1]]
    assert sample[8] == [data.label_dict[t] for t in data.labels[1]]
    assert [x.tolist()[0] for x in data[2][1:7]] == [0, 7, 8, 6, 10, 1]  # 'bos' past the start: <unk>
    assert data.get_embedding() == str(d / "emb") and data.get_dict()[1] == {"sat": 0, "ran": 1, "on": 2}


def test_wmt14(translation_dir):
    train = text.WMT14(data_file=str(translation_dir / "wmt14.tgz"), dict_size=6)
    # paddle 3.3.1: 'noir' and 'chien' are past the 6-word dictionaries (<unk> = 2); the bad line is skipped
    assert [[x.tolist() for x in train[i]] for i in range(len(train))] == [
        [[0, 3, 4, 5, 2, 1], [0, 3, 4, 5, 2], [3, 4, 5, 2, 1]], [[0, 3, 2, 1], [0, 3, 2], [3, 2, 1]]]
    assert train.get_dict(reverse=True)[1] == {0: "<s>", 1: "<e>", 2: "<unk>", 3: "the", 4: "cat", 5: "is"}
    assert len(text.WMT14(data_file=str(translation_dir / "wmt14.tgz"), mode="gen", dict_size=6)) == 0
    with pytest.raises(ValueError, match="dict_size"):
        text.WMT14(data_file=str(translation_dir / "wmt14.tgz"))


def test_wmt16(translation_dir):
    path = str(translation_dir / "wmt16.tar.gz")
    en = text.WMT16(data_file=path, src_dict_size=8, trg_dict_size=7)
    # the source side equals paddle 3.3.1's; paddle builds the target dictionary from the source
    # language too (its target ids are all <unk>), pycoll from the target language
    assert en.src_dict == {"<s>": 0, "<e>": 1, "<unk>": 2, "the": 3, "cat": 4, "is": 5, "black": 6, "dog": 7}
    assert en.trg_dict == {"<s>": 0, "<e>": 1, "<unk>": 2, "die": 3, "katze": 4, "ist": 5, "schwarz": 6}
    assert [x.tolist() for x in en[1]] == [[0, 3, 7, 5, 2, 1], [0, 2, 2, 5, 2], [2, 2, 5, 2, 1]]
    de = text.WMT16(data_file=path, mode="test", src_dict_size=8, trg_dict_size=7, lang="de")
    assert [x.tolist() for x in de[0]] == [[0, 3, 2, 4, 1], [0, 3, 2, 4], [3, 2, 4, 1]]
    assert de.get_dict("en", reverse=True)[3] == "the"
    with pytest.raises(ValueError, match="lang"):
        text.WMT16(data_file=path, src_dict_size=8, trg_dict_size=7, lang="fr")


def test_embedding_and_beam_search_name_a_misfit_weight_or_missing_inits():
    with pytest.raises(ValueError, match=r"embedding: weight must be 2-D \[num_embeddings, embedding_dim\], got shape \[4\]"):
        pycoll.nn.functional.embedding(pycoll.to_tensor([0, 1]), pycoll.ones([4]))
    cell = pycoll.nn.GRUCell(4, 4)
    decoder = pycoll.nn.BeamSearchDecoder(cell, start_token=0, end_token=1, beam_size=2,
                                          embedding_fn=pycoll.nn.Embedding(5, 4), output_fn=pycoll.nn.Linear(4, 5))
    with pytest.raises(TypeError, match=r"initial_cell_states \(dynamic_decode's inits\) must be the cell's initial"):
        pycoll.nn.dynamic_decode(decoder, inits=None, max_step_num=3)

"""pycoll.vision.datasets.Flowers and VOC2012 on small archives in paddle's layout (lossless PNG
content under paddle's file names, so the pixels read back are the ones written)."""
import io
import tarfile

import numpy as np
import pytest

import pycoll
from pycoll.vision.datasets import VOC2012, Flowers

Image = pytest.importorskip("PIL.Image")


def _png(array):
    buffer = io.BytesIO()
    Image.fromarray(array).save(buffer, format="PNG")
    return buffer.getvalue()


def _add(archive, name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    archive.addfile(info, io.BytesIO(data))


IMAGES = [np.full((4, 5, 3), 10 * i, np.uint8) + np.arange(5, dtype=np.uint8)[:, None] for i in range(1, 5)]


@pytest.fixture(scope="module")
def flowers_files(tmp_path_factory):
    scio = pytest.importorskip("scipy.io")
    d = tmp_path_factory.mktemp("flowers")
    with tarfile.open(d / "102flowers.tgz", "w:gz") as archive:
        for i, image in enumerate(IMAGES, start=1):
            _add(archive, f"jpg/image_{i:05}.jpg", _png(image))
    scio.savemat(d / "imagelabels.mat", {"labels": np.array([[7, 8, 9, 10]], np.uint8)})
    scio.savemat(d / "setid.mat", {"tstid": np.array([[4, 1]]), "trnid": np.array([[2]]), "valid": np.array([[3]])})
    return {k: str(d / f) for k, f in (("data_file", "102flowers.tgz"), ("label_file", "imagelabels.mat"),
                                        ("setid_file", "setid.mat"))}


def test_flowers(flowers_files):
    train = Flowers(**flowers_files, backend="cv2")  # paddle's 'train' is setid's tstid
    assert len(train) == 2
    image, label = train[0]
    assert image.dtype == np.float32 and label.dtype == np.int64 and label.tolist() == [10]
    np.testing.assert_array_equal(image, IMAGES[3])
    valid = Flowers(**flowers_files, mode="valid", transform=lambda im: im.rotate(180))
    image, label = valid[0]
    assert label.tolist() == [9] and np.array_equal(np.array(image), IMAGES[2][::-1, ::-1])
    assert Flowers(**flowers_files, mode="test")[0][1].tolist() == [8]
    with pytest.raises(ValueError, match="mode"):
        Flowers(**flowers_files, mode="val")


def test_voc2012(tmp_path):
    path = tmp_path / "VOCtrainval_11-May-2012.tar"
    labels = [np.array([[0, 1], [2, 255]], np.uint8), np.array([[3, 3], [0, 0]], np.uint8)]
    with tarfile.open(path, "w") as archive:
        _add(archive, "VOCdevkit/VOC2012/ImageSets/Segmentation/trainval.txt", b"2007_000032\n2007_000039\n")
        _add(archive, "VOCdevkit/VOC2012/ImageSets/Segmentation/val.txt", b"2007_000039\n")
        for name, image, label in zip(("2007_000032", "2007_000039"), IMAGES, labels):
            _add(archive, f"VOCdevkit/VOC2012/JPEGImages/{name}.jpg", _png(image))
            _add(archive, f"VOCdevkit/VOC2012/SegmentationClass/{name}.png", _png(label))
    train = VOC2012(data_file=str(path), backend="cv2")
    assert len(train) == 2
    image, label = train[1]
    assert image.dtype == label.dtype == np.dtype(pycoll.get_default_dtype())
    np.testing.assert_array_equal(image, IMAGES[1])
    np.testing.assert_array_equal(label, labels[1])
    valid = VOC2012(data_file=str(path), mode="valid")
    image, label = valid[0]
    assert len(valid) == 1 and np.array_equal(np.array(image), IMAGES[1]) and np.array_equal(np.array(label), labels[1])

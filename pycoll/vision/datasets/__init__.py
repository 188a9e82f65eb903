"""paddle.vision.datasets read from local files (pycoll downloads nothing): MNIST, FashionMNIST,
Cifar10, Cifar100, DatasetFolder, ImageFolder, Flowers, VOC2012."""
from pycoll.vision.datasets.cifar import Cifar10, Cifar100
from pycoll.vision.datasets.flowers import Flowers
from pycoll.vision.datasets.folder import DatasetFolder, ImageFolder
from pycoll.vision.datasets.mnist import MNIST, FashionMNIST
from pycoll.vision.datasets.voc2012 import VOC2012

__all__ = ["MNIST", "Cifar10", "Cifar100", "DatasetFolder", "FashionMNIST", "Flowers", "ImageFolder", "VOC2012"]

"""paddle.vision.datasets read from local files (pycoll downloads nothing): MNIST, FashionMNIST,
Cifar10, Cifar100, DatasetFolder, ImageFolder."""
from pycoll.vision.datasets.cifar import Cifar10, Cifar100
from pycoll.vision.datasets.folder import DatasetFolder, ImageFolder
from pycoll.vision.datasets.mnist import MNIST, FashionMNIST

__all__ = ["MNIST", "Cifar10", "Cifar100", "DatasetFolder", "FashionMNIST", "ImageFolder"]

"""paddle.vision: the model zoo (``models``), the detection ops (``ops``: nms, roi_align, box_coder...), image transforms on NumPy arrays (and PIL images
where Pillow is installed) (``transforms``) and the standard datasets read from local files
(``datasets``; pycoll downloads nothing)."""
from pycoll.vision import datasets, models, ops, transforms
from pycoll.vision.datasets import MNIST, Cifar10, Cifar100, DatasetFolder, FashionMNIST, ImageFolder
from pycoll.vision.image import get_image_backend, image_load, set_image_backend
from pycoll.vision.models import (VGG, AlexNet, LeNet, MobileNetV1, MobileNetV2, ResNet, alexnet, mobilenet_v1,
                                  mobilenet_v2, resnet18, resnet34, resnet50, resnet101, resnet152,
                                  resnext50_32x4d, resnext50_64x4d, resnext101_32x4d, resnext101_64x4d,
                                  resnext152_32x4d, resnext152_64x4d, vgg11, vgg13, vgg16, vgg19, wide_resnet50_2,
                                  wide_resnet101_2)
from pycoll.vision.transforms import (BaseTransform, BrightnessTransform, ColorJitter, ContrastTransform, Grayscale,
                                      HueTransform, RandomRotation, SaturationTransform, adjust_hue, rotate,
                                      to_grayscale)
from pycoll.vision.transforms import (CenterCrop, Compose, Normalize, Pad, RandomCrop,
                                      RandomHorizontalFlip, RandomResizedCrop, RandomVerticalFlip, Resize, ToTensor,
                                      Transpose, adjust_brightness, adjust_contrast, center_crop, crop, hflip,
                                      normalize, pad, resize, to_tensor, vflip)

__all__ = ["datasets", "models", "ops", "transforms", "get_image_backend", "image_load", "set_image_backend", "MNIST",
           "Cifar10", "Cifar100", "DatasetFolder", "FashionMNIST", "ImageFolder", "BaseTransform", "BrightnessTransform", "ColorJitter", "ContrastTransform",
           "Grayscale", "HueTransform", "RandomRotation", "SaturationTransform", "adjust_hue", "rotate", "to_grayscale", "CenterCrop", "Compose", "Normalize", "Pad", "RandomCrop",
           "RandomHorizontalFlip", "RandomResizedCrop", "RandomVerticalFlip", "Resize", "ToTensor", "Transpose",
           "adjust_brightness", "adjust_contrast", "center_crop", "crop", "hflip", "normalize", "pad", "resize",
           "to_tensor", "vflip", "VGG", "AlexNet", "LeNet", "MobileNetV1", "MobileNetV2", "ResNet", "alexnet", "mobilenet_v1",
           "mobilenet_v2", "resnet18", "resnet34", "resnet50", "resnet101", "resnet152", "resnext50_32x4d",
           "resnext50_64x4d", "resnext101_32x4d", "resnext101_64x4d", "resnext152_32x4d", "resnext152_64x4d",
           "vgg11", "vgg13", "vgg16", "vgg19", "wide_resnet50_2", "wide_resnet101_2"]

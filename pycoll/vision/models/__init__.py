"""paddle.vision.models: LeNet, AlexNet, VGG, ResNet (and ResNeXt / wide ResNet), MobileNetV1/V2,
built from pycoll.nn layers with paddle's parameter names, shapes and initialisation."""
from pycoll.vision.models._common import ConvNormActivation
from pycoll.vision.models.alexnet import AlexNet, alexnet
from pycoll.vision.models.lenet import LeNet
from pycoll.vision.models.mobilenetv1 import MobileNetV1, mobilenet_v1
from pycoll.vision.models.mobilenetv2 import MobileNetV2, mobilenet_v2
from pycoll.vision.models.resnet import (BasicBlock, BottleneckBlock, ResNet, resnet18, resnet34, resnet50,
                                         resnet101, resnet152, resnext50_32x4d, resnext50_64x4d,
                                         resnext101_32x4d, resnext101_64x4d, resnext152_32x4d,
                                         resnext152_64x4d, wide_resnet50_2, wide_resnet101_2)
from pycoll.vision.models.vgg import VGG, vgg11, vgg13, vgg16, vgg19

__all__ = ["AlexNet", "BasicBlock", "BottleneckBlock", "ConvNormActivation", "LeNet", "MobileNetV1",
           "MobileNetV2", "ResNet", "VGG", "alexnet", "mobilenet_v1", "mobilenet_v2", "resnet18", "resnet34",
           "resnet50", "resnet101", "resnet152", "resnext50_32x4d", "resnext50_64x4d", "resnext101_32x4d",
           "resnext101_64x4d", "resnext152_32x4d", "resnext152_64x4d", "vgg11", "vgg13", "vgg16", "vgg19",
           "wide_resnet50_2", "wide_resnet101_2"]

"""paddle.vision.models: LeNet, AlexNet, VGG, ResNet (and ResNeXt / wide ResNet), MobileNetV1/V2/V3,
SqueezeNet, ShuffleNetV2, DenseNet, GoogLeNet and InceptionV3, built from pycoll.nn layers with
paddle's parameter names, shapes and initialisation."""
from pycoll.vision.models._common import ConvNormActivation
from pycoll.vision.models.alexnet import AlexNet, alexnet
from pycoll.vision.models.densenet import (DenseNet, densenet121, densenet161, densenet169, densenet201,
                                           densenet264)
from pycoll.vision.models.googlenet import GoogLeNet, googlenet
from pycoll.vision.models.inceptionv3 import InceptionV3, inception_v3
from pycoll.vision.models.lenet import LeNet
from pycoll.vision.models.mobilenetv1 import MobileNetV1, mobilenet_v1
from pycoll.vision.models.mobilenetv2 import MobileNetV2, mobilenet_v2
from pycoll.vision.models.mobilenetv3 import (MobileNetV3Large, MobileNetV3Small, mobilenet_v3_large,
                                              mobilenet_v3_small)
from pycoll.vision.models.resnet import (BasicBlock, BottleneckBlock, ResNet, resnet18, resnet34, resnet50,
                                         resnet101, resnet152, resnext50_32x4d, resnext50_64x4d,
                                         resnext101_32x4d, resnext101_64x4d, resnext152_32x4d,
                                         resnext152_64x4d, wide_resnet50_2, wide_resnet101_2)
from pycoll.vision.models.shufflenetv2 import (ShuffleNetV2, shufflenet_v2_swish, shufflenet_v2_x0_25,
                                               shufflenet_v2_x0_33, shufflenet_v2_x0_5, shufflenet_v2_x1_0,
                                               shufflenet_v2_x1_5, shufflenet_v2_x2_0)
from pycoll.vision.models.squeezenet import SqueezeNet, squeezenet1_0, squeezenet1_1
from pycoll.vision.models.vgg import VGG, vgg11, vgg13, vgg16, vgg19

__all__ = ["AlexNet", "BasicBlock", "BottleneckBlock", "ConvNormActivation", "DenseNet", "GoogLeNet", "InceptionV3",
           "LeNet", "MobileNetV1", "MobileNetV2", "MobileNetV3Large", "MobileNetV3Small", "ResNet", "ShuffleNetV2",
           "SqueezeNet", "VGG", "alexnet", "densenet121", "densenet161", "densenet169", "densenet201",
           "densenet264", "googlenet", "inception_v3", "mobilenet_v1", "mobilenet_v2", "mobilenet_v3_large",
           "mobilenet_v3_small", "resnet18", "resnet34", "resnet50", "resnet101", "resnet152", "resnext50_32x4d",
           "resnext50_64x4d", "resnext101_32x4d", "resnext101_64x4d", "resnext152_32x4d", "resnext152_64x4d",
           "shufflenet_v2_swish", "shufflenet_v2_x0_25", "shufflenet_v2_x0_33", "shufflenet_v2_x0_5",
           "shufflenet_v2_x1_0", "shufflenet_v2_x1_5", "shufflenet_v2_x2_0", "squeezenet1_0", "squeezenet1_1",
           "vgg11", "vgg13", "vgg16", "vgg19", "wide_resnet50_2", "wide_resnet101_2"]
from pycoll.vision.models import _utils  # noqa: E402,F401 - paddle.vision.models._utils (IntermediateLayerGetter)

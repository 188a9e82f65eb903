"""paddle.vision.transforms: the transform classes and their functional forms."""
from pycoll.vision.transforms import functional
from pycoll.vision.transforms.colour_transforms import (BrightnessTransform, ColorJitter, ContrastTransform, Grayscale,
                                                        HueTransform, SaturationTransform)
from pycoll.vision.transforms.functional import (adjust_brightness, adjust_contrast, adjust_hue, affine, center_crop,
                                                 crop, erase, hflip, normalize, pad, perspective, resize, rotate,
                                                 to_grayscale, to_tensor, vflip)
from pycoll.vision.transforms.geometry_transforms import (RandomAffine, RandomErasing, RandomPerspective,
                                                          RandomRotation)
from pycoll.vision.transforms.transforms import (BaseTransform, CenterCrop, Compose, Normalize, Pad, RandomCrop,
                                                 RandomHorizontalFlip, RandomResizedCrop, RandomVerticalFlip,
                                                 Resize, ToTensor, Transpose)

__all__ = ["BaseTransform", "Compose", "Resize", "RandomResizedCrop", "CenterCrop", "RandomHorizontalFlip",
           "RandomVerticalFlip", "Transpose", "Normalize", "BrightnessTransform", "SaturationTransform",
           "ContrastTransform", "HueTransform", "ColorJitter", "RandomCrop", "Pad", "RandomAffine", "RandomRotation",
           "RandomPerspective", "Grayscale", "ToTensor", "RandomErasing", "to_tensor", "hflip", "vflip", "resize",
           "pad", "affine", "rotate", "perspective", "to_grayscale", "crop", "center_crop", "adjust_brightness",
           "adjust_contrast", "adjust_hue", "normalize", "erase", "functional"]

"""paddle.vision.transforms: the transform classes and their functional forms."""
from pycoll.vision.transforms import functional
from pycoll.vision.transforms.functional import (adjust_brightness, adjust_contrast, center_crop, crop, erase,
                                                 hflip, normalize, pad, resize, to_tensor, vflip)
from pycoll.vision.transforms.transforms import (BaseTransform, CenterCrop, Compose, Normalize, Pad, RandomCrop,
                                                 RandomHorizontalFlip, RandomResizedCrop, RandomVerticalFlip,
                                                 Resize, ToTensor, Transpose)

__all__ = ["BaseTransform", "CenterCrop", "Compose", "Normalize", "Pad", "RandomCrop", "RandomHorizontalFlip",
           "RandomResizedCrop", "RandomVerticalFlip", "Resize", "ToTensor", "Transpose", "adjust_brightness",
           "adjust_contrast", "center_crop", "crop", "erase", "functional", "hflip", "normalize", "pad", "resize",
           "to_tensor", "vflip"]

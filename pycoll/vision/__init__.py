"""paddle.vision: the model zoo (``models``), the detection ops (``ops``: nms, roi_align, box_coder...), image transforms on NumPy arrays (and PIL images
where Pillow is installed) (``transforms``) and the standard datasets read from local files
(``datasets``; pycoll downloads nothing)."""
from pycoll.vision import datasets, models, ops, transforms
from pycoll.vision.image import get_image_backend, image_load, set_image_backend

# paddle.vision names every dataset, model and transform at its top too (its star imports)
_FACES = (datasets, models, transforms)
globals().update({name: getattr(module, name) for module in _FACES for name in module.__all__})

__all__ = ["datasets", "models", "ops", "transforms", "get_image_backend", "image_load", "set_image_backend",
           *(name for module in _FACES for name in module.__all__)]

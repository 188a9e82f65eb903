"""paddle.vision.ops: the detection ops (box coding, prior boxes, NMS, RoI pooling, YOLO heads,
region proposals, deformable convolution) and JPEG reading, each in a small module."""
from pycoll.vision.ops.boxes import box_coder, prior_box
from pycoll.vision.ops.nms import matrix_nms, nms
from pycoll.vision.ops.roi import PSRoIPool, RoIAlign, RoIPool, psroi_pool, roi_align, roi_pool

__all__ = ["PSRoIPool", "RoIAlign", "RoIPool", "box_coder", "matrix_nms", "nms", "prior_box", "psroi_pool", "roi_align",
           "roi_pool"]

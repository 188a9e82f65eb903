"""paddle.vision.ops: the detection ops (box coding, prior boxes, NMS, RoI pooling, YOLO heads,
region proposals, deformable convolution) and JPEG reading, each in a small module."""
from pycoll.vision.ops.boxes import box_coder, prior_box
from pycoll.vision.ops.deform_conv import DeformConv2D, deform_conv2d
from pycoll.vision.ops.io import decode_jpeg, read_file
from pycoll.vision.ops.nms import matrix_nms, nms
from pycoll.vision.ops.proposals import distribute_fpn_proposals, generate_proposals
from pycoll.vision.ops.roi import PSRoIPool, RoIAlign, RoIPool, psroi_pool, roi_align, roi_pool
from pycoll.vision.ops.yolo import yolo_box
from pycoll.vision.ops.yolo_loss import yolo_loss

__all__ = ["DeformConv2D", "PSRoIPool", "RoIAlign", "RoIPool", "box_coder", "decode_jpeg", "deform_conv2d",
           "distribute_fpn_proposals", "generate_proposals", "matrix_nms", "nms", "prior_box", "psroi_pool",
           "read_file", "roi_align", "roi_pool", "yolo_box", "yolo_loss"]

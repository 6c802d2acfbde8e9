"""roi_align: bilinear averages over regions of interest (torchvision.ops.roi_align)."""

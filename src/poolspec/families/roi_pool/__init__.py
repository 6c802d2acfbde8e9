"""roi_pool: maxima over regions of interest (torchvision.ops.roi_pool)."""

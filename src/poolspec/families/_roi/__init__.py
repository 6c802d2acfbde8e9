"""What the region-of-interest families (roi_align, roi_pool) share, one module per layer as a family's folder is
laid out: ``card.py`` (the card's box checks, arguments and notes), ``ops.py`` (the boxes' two forms, the capture
nodes' arguments, Dask's channel blocks), ``capture.py`` (the torch.compile nodes' common pieces), ``conformance.py``
(box synthesis and refused calls) and ``bench.py`` (the benchmark peers). The leading underscore keeps it out of
the family discovery."""

"""roi_pool's and ps_roi_pool's benchmark peers: the RoI families' op-count call (boxes of a detector's sizes over
the whole map, x differentiated, not the boxes) and torchvision's op of the same name, counted where it imports
(torch has none)."""

from __future__ import annotations

from .._roi.bench import roi_peers

PEERS = roi_peers("roi_pool")

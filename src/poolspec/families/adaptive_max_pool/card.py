"""The cards of adaptive_max_pool1d/2d/3d: the adaptive windows' card, shared with the average family
(``spec._pools._adaptive_card``)."""

from __future__ import annotations

from ...spec._pools import adaptive_card
from .. import Family

FAMILY = Family('adaptive_max_pool', 'routed', 4, lambda: [adaptive_card('max', n) for n in (1, 2, 3)])

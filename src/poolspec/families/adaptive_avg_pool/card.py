"""The cards of adaptive_avg_pool1d/2d/3d: the adaptive windows' card, shared with the max family
(``spec._pools._adaptive_card``)."""

from __future__ import annotations

from ...spec._pools import adaptive_card
from .. import Family

FAMILY = Family('adaptive_avg_pool', 'linear', 2, lambda: [adaptive_card('avg', n) for n in (1, 2, 3)])

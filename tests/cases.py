"""The test grids are the conformance catalogue's: one source for the edge rules (each family's conformance record,
``poolspec/families/<family>/conformance.py``)."""

from poolspec.conformance.cases import Case, adaptive_grid, adaptive_random  # noqa: F401
from poolspec.families.avg_pool.conformance import (  # noqa: F401
    avg_dilated_grid,
    avg_dilated_random,
    avg_grid,
    avg_random,
)
from poolspec.families.interpolate.conformance import interp_grid, interp_random  # noqa: F401
from poolspec.families.lp_pool.conformance import lp_grid, lp_random  # noqa: F401
from poolspec.families.max_pool.conformance import max_grid, max_random  # noqa: F401
from poolspec.families.max_unpool.conformance import unpool_grid, unpool_random  # noqa: F401

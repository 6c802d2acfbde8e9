"""The test grids are the conformance catalogue's: one source for the edge rules (poolspec.conformance.catalogue)."""

from poolspec.conformance.catalogue import (  # noqa: F401
    Case,
    adaptive_grid,
    adaptive_random,
    avg_grid,
    avg_random,
    interp_grid,
    interp_random,
    lp_grid,
    lp_random,
    max_grid,
    max_random,
    unpool_grid,
    unpool_random,
)

"""``torch.nn.functional``'s pooling, unpooling, resampling and sampling functions: poolspec's own, which have
torch.nn.functional's names, signatures and numerics already (every other name is torch's, imported on first use).

>>> import numpy as np
>>> from poolspec.frontends.torch.nn import functional as F
>>> F.max_pool1d(np.arange(4.0).reshape(1, 1, 4), 2)
array([[[1., 3.]]])
"""

from ....families.adaptive_avg_pool.ops import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d
from ....families.adaptive_max_pool.ops import adaptive_max_pool1d, adaptive_max_pool2d, adaptive_max_pool3d
from ....families.affine_grid.ops import affine_grid
from ....families.avg_pool.ops import avg_pool1d, avg_pool2d, avg_pool3d
from ....families.fractional_max_pool.ops import fractional_max_pool2d, fractional_max_pool3d
from ....families.grid_sample.ops import grid_sample
from ....families.interpolate.ops import interpolate
from ....families.lp_pool.ops import lp_pool1d, lp_pool2d, lp_pool3d
from ....families.max_pool.ops import max_pool1d, max_pool2d, max_pool3d
from ....families.max_unpool.ops import max_unpool1d, max_unpool2d, max_unpool3d
from ..._common import mirror

__all__ = ["avg_pool1d", "avg_pool2d", "avg_pool3d", "max_pool1d", "max_pool2d", "max_pool3d",
           "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
           "adaptive_max_pool2d", "adaptive_max_pool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d", "max_unpool1d",
           "max_unpool2d", "max_unpool3d", "fractional_max_pool2d", "fractional_max_pool3d", "interpolate",
           "grid_sample", "affine_grid"]
# other names are torch.nn.functional's own: the import prefix is the whole port
__getattr__, __dir__ = mirror(__name__, "torch.nn.functional", __all__)

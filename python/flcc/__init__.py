"""FLCC: fast convolution, cross-correlation and local correlation coefficients (zero-mean
normalised cross-correlation) of 1D-3D images on CPUs and NVIDIA GPUs.

Drop-in functions with their peers' semantics: match_template (scikit-image), convolve and
correlate (SciPy), normxcorr2 (MATLAB); register_subregions for sub-pixel offsets of subregions
(EBSD, PIV, DIC). Plan for reuse per frame; BatchPlan for many small correlations per frame
and their peaks. NumPy, CuPy and PyTorch arrays go in without copies and results come back in
the caller's framework and device.
flcc.dask runs the same functions over Dask arrays.
"""

from . import _flcc
from ._errors import CODES, Error
from ._batch import PEAK_DTYPE, BatchPlan
from ._functions import convolve, correlate, match_template, normxcorr2
from ._plan import Plan, clear_cache
from ._register import register_subregions
from ._wisdom import (export_wisdom, export_wisdom_file, forget_wisdom, import_wisdom,
                      import_wisdom_file, load_wisdom, save_wisdom, wisdom_path)
from ._wisdom import _load_at_import

__version__ = "{}.{}.{}".format(_flcc.version() // 10000, _flcc.version() // 100 % 100,
                                _flcc.version() % 100)


_load_at_import()


def solvers():
    """The names of the solvers this build has (for Plan(method=...))."""
    return list(_flcc.solver_names())


__all__ = ["BatchPlan", "CODES", "Error", "PEAK_DTYPE", "Plan", "clear_cache", "convolve",
           "correlate", "export_wisdom", "export_wisdom_file", "forget_wisdom", "import_wisdom",
           "import_wisdom_file", "load_wisdom", "match_template", "normxcorr2",
           "register_subregions", "save_wisdom", "solvers", "wisdom_path"]

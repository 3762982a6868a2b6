"""Calibration and model fitting: from measurements to machine profiles.

Modules, one job each:

* :mod:`~bsim.calibration.stats`: medians, quartiles, MAD, outliers, the
  median's confidence interval, the repetition rule, isotonic smoothing;
* :mod:`~bsim.calibration.sampling`: repeat a timed MPI operation under that rule;
* :mod:`~bsim.calibration.lsq`: input checks and bounded least squares;
* :mod:`~bsim.calibration.netfit`: Hockney, three-piece ``Tmsg(L)`` and LogGP fits;
* :mod:`~bsim.calibration.kernels`: kernel fits (linear, the BSIM paper piecewise,
  the MILC paper Eq. 1) and :func:`~bsim.calibration.kernels.kernel_time`;
* :mod:`~bsim.calibration.network_bench`, :mod:`~bsim.calibration.collective_bench`:
  the mpi4py microbenchmarks (``bsim calibrate network|collectives``);
* :mod:`~bsim.calibration.netprofile`: network fits -> profile tables and CSV;
* :mod:`~bsim.calibration.profile`: machine-profile TOML (the preset schema);
* :mod:`~bsim.cli.calibrate`: ``add_parsers`` / ``run`` for the ``bsim`` command.

mpi4py is imported only by the measuring functions and scipy only by the
fits, so ``import bsim.calibration`` needs neither.  Workflow and formulas:
``docs/calibration.md``.
"""

from __future__ import annotations

from .errors import CalibrationError, FitError
from .kernels import KernelFit, fit_kernel, kernel_time, read_kernel_csv
from .netfit import HockneyFit, LogGPRange, PiecewiseFit, fit_hockney, fit_loggp, fit_piecewise
from .profile import read_profile, update_profile, write_profile
from .stats import Repetitions, Summary, isotonic, summarize

__all__ = [
    "CalibrationError", "FitError",
    "KernelFit", "fit_kernel", "kernel_time", "read_kernel_csv",
    "HockneyFit", "PiecewiseFit", "LogGPRange", "fit_hockney", "fit_piecewise", "fit_loggp",
    "read_profile", "update_profile", "write_profile",
    "Repetitions", "Summary", "summarize", "isotonic",
]

"""``python -m bsim.calibration {calibrate,fit} ...`` (same commands as ``bsim``)."""

from .cli import main

raise SystemExit(main())

"""``python -m bsim.calibration {calibrate,fit} ...`` (same commands as ``bsim``)."""

from ..cli.calibrate import main

raise SystemExit(main())

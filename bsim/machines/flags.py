"""The calibration flags of the fits a run uses: warned of and recorded.

``bsim calibrate network`` and ``bsim fit kernel`` write a fit that should not be predicted
with beside its flags (``[hardware] calibration_<pair>_flags``,
``calibration_kernel_<app>_<kernel>_flags``; ``bsim/calibration/quality.py``).  A run that
takes such a fit from its machine file warns once per fit (one line: the file, the fit and
its flags) and records them in ``Result.calibration_flags`` (``docs/calibration.md``,
"Flags at run time").  Only the fits the run uses count: the network table it runs on
(``[network]``, calibrate's Hockney fit of ``calibration_primary_pair``, or the variant),
and the kernel entries its skeleton takes (:func:`bsim.machines.kernels.choose`).

The flags are collected per run with :func:`~netmodels.input_files.per_run` (the block
``bsim.simulate`` and ``bsim run`` open for ``Result.inputs``), so a fit read at load
time and by every rank is warned of once; outside a block each use warns.  Under
``mpiexec`` every host process reads the same files and records the same flags; only
host process 0 warns (``bsim run`` ignores :class:`CalibrationFlagWarning` on the others).
"""

from __future__ import annotations

import re
import warnings
from typing import Any

from netmodels.input_files import per_run

from . import Machine

__all__ = ["CalibrationFlagWarning", "note_network_flags", "note_kernel_flags", "noted_flags"]

_NOTED = ("calibration flags of the fits used",)
_VARIANT = re.compile(r"(hockney|piecewise|loggp_ranges|loggp)_(intra|inter)"
                      r"(?:_(small|medium|large))?")
_RANGE_NAMES = {2: ("small", "large"), 3: ("small", "medium", "large")}   # netprofile's


class CalibrationFlagWarning(UserWarning):
    """A fit the run uses is flagged by its calibration (the same on every host process)."""


def _note(machine: Machine, fit: str, what: str, flags: Any) -> None:
    """Warn of and record *flags* (a profile's list of strings) of *fit*, once per run."""
    if not isinstance(flags, list) or not flags:
        return
    seen: dict[str, list[str]] = per_run(_NOTED, dict)
    if fit in seen:
        return
    seen[fit] = [str(f) for f in flags]
    warnings.warn(f"{machine.label}: {fit} ({what}) is flagged by its calibration, predict "
                  f"with care: {'; '.join(seen[fit])}", CalibrationFlagWarning, stacklevel=3)


def _network_fit(machine: Machine) -> tuple[str, str, str, list[str]] | None:
    """``(table, pair, fit, loggp ranges)`` of the network table the machine runs on, when
    ``calibrate network`` wrote it; None for a table of the user's own."""
    hw = machine.hardware
    variants = machine.network_variants
    if machine.variant is None:
        pair = hw.get("calibration_primary_pair")
        if pair not in ("intra", "inter") or \
                variants.get(f"hockney_{pair}", machine.network) != machine.network:
            return None   # not calibrate's fit (written or edited by hand)
        return "[network]", pair, "hockney", []
    match = _VARIANT.fullmatch(machine.variant)
    if match is None:
        return None
    kind, pair, piece = match.groups()
    if kind in ("hockney", "piecewise"):
        return f"[network_variants.{machine.variant}]", pair, kind, []
    from bsim.calibration.quality import loggp_range_texts
    if kind == "loggp" and piece is None:   # over all sizes
        return f"[network_variants.{machine.variant}]", pair, "loggp", loggp_range_texts([])
    breaks = str(variants.get(f"piecewise_{pair}", {}).get("breaks", ""))
    texts = loggp_range_texts([int(b) for b in breaks.split("/") if b.isdigit()])
    names = _RANGE_NAMES.get(len(texts), ())
    if piece is not None and len(names) == len(texts):   # else no breaks tell the ranges
        texts = [t for n, t in zip(names, texts, strict=True) if n == piece]
    return f"[network_variants.{machine.variant}]", pair, "loggp", texts


def note_network_flags(machine: Machine) -> None:
    """Warn of and record the flags of the calibrated network fit the run uses (a file
    without flags, such as a bundled preset whose variants are named like calibrate's,
    has none to look up)."""
    hw = machine.hardware
    if not any(isinstance(hw.get(f"calibration_{pair}_flags"), list)
               for pair in ("intra", "inter")):
        return
    found = _network_fit(machine)
    if found is None:
        return
    table, pair, fit, ranges = found
    flags = hw.get(f"calibration_{pair}_flags")
    if isinstance(flags, list):
        from bsim.calibration.quality import fit_flags
        _note(machine, table, f"{'LogGP' if fit == 'loggp' else fit.capitalize()} fit, "
                              f"{pair}-node pair", fit_flags([str(f) for f in flags], fit, ranges))


def note_kernel_flags(machine: Machine, table: str, keys: tuple[str, ...]) -> None:
    """Warn of and record the flags of the fits ``[kernels.<table>] <key>`` the run takes
    (every entry of the table when *keys* is empty)."""
    from bsim.calibration.quality import kernel_flags_key
    entries = machine.kernels.get(table, {})
    for key in keys or tuple(entries):
        if key in entries:
            _note(machine, f"[kernels.{table}] {key}", "bsim fit kernel",
                  machine.hardware.get(kernel_flags_key(table, key)))


def noted_flags() -> dict[str, list[str]]:
    """The flags noted in this run so far, ``{fit: [flag, ...]}``: what
    ``Result.calibration_flags`` records."""
    return dict(per_run(_NOTED, dict))

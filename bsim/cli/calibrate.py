"""Command line of the calibration package: ``bsim calibrate ...`` and ``bsim fit ...``.

    mpiexec -n 2 bsim calibrate network     [--profile FILE] [--sizes LIST] [--quick] ...
    mpiexec -n 2 bsim calibrate collectives [--profile FILE] [--csv FILE] [--ops LIST] ...
    bsim fit kernel DATA.csv --model {linear,piecewise,cache2} [--profile FILE --app A --kernel K]

``bsim/cli/main.py`` hooks these in with :func:`add_parsers`, which sets :func:`run`
as their handler.  ``python -m bsim.calibration ...`` runs the
same commands without the main CLI.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path
from typing import Any

from ..calibration.errors import CalibrationError

__all__ = ["add_parsers", "run", "parse_sizes", "main"]

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def parse_sizes(text: str) -> list[int]:
    """``"0,8,1K,64K,4M"`` -> bytes (K, M, G are powers of 1024)."""
    out = []
    for item in filter(None, (t.strip() for t in text.split(","))):
        unit = item[-1].upper() if item[-1].isalpha() else ""
        number = item[:-1] if unit else item
        if unit not in _UNITS or not number.isdigit():
            raise argparse.ArgumentTypeError(f"bad size {item!r}: expected an integer with an "
                                             f"optional K, M or G suffix")
        out.append(int(number) * _UNITS[unit])
    if not out:
        raise argparse.ArgumentTypeError("empty size list")
    return out


def _int_list(text: str) -> list[int]:
    try:
        return [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}"
                                         ) from None


def _repetition_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("repetitions (stop when the 95% median interval is within "
                             "--rel-ci, or at --max-reps, or after --max-seconds per point)")
    g.add_argument("--min-reps", type=int, default=None, help="samples per point at least "
                   "(default 10; --quick 5)")
    g.add_argument("--max-reps", type=int, default=None, help="samples per point at most "
                   "(default 200; --quick 20)")
    g.add_argument("--rel-ci", type=float, default=0.02,
                   help="target half-width of the median's 95%% interval (default 0.02)")
    g.add_argument("--max-seconds", type=float, default=None,
                   help="wall-time budget per point once --min-reps are in (default 1; "
                        "--quick 0.2)")
    p.add_argument("--quick", action="store_true", help="small sweep, few repetitions")


def add_parsers(subparsers: Any) -> None:
    """Register ``calibrate {network,collectives}`` and ``fit kernel`` on *subparsers*."""
    cal = subparsers.add_parser("calibrate", help="measure this machine under mpiexec "
                                "(network, collectives) into a machine profile")
    cal.set_defaults(handler=run)
    calsub = cal.add_subparsers(dest="calibrate_what", required=True)

    net = calsub.add_parser("network", help="ping-pong and streams: Hockney, piecewise, LogGP")
    net.add_argument("--profile", default="machine.toml", help="machine profile to create or "
                     "update (default machine.toml)")
    net.add_argument("--data", default=None, help="CSV of every measured point (default "
                     "PROFILE with suffix .network.csv)")
    net.add_argument("--name", default=None, help="machine name (default: host name)")
    net.add_argument("--cores-per-node", type=int, default=None,
                     help="cores_per_node to record (default: ranks per node of this run)")
    net.add_argument("--sizes", type=parse_sizes, default=None,
                     help="message sizes, e.g. 0,64,1K,64K,1M (default 0,1,4,...,4M; --quick "
                          "0,64,1K,8K,64K,256K)")
    net.add_argument("--stream-count", type=int, default=16,
                     help="messages per stream for LogGP's gap and overhead (default 16)")
    net.add_argument("--no-stream", action="store_true", help="ping-pong only (no LogGP)")
    net.add_argument("--weighting", choices=("relative", "absolute"), default="relative")
    _repetition_options(net)

    col = calsub.add_parser("collectives", help="collective times over sub-communicators: "
                            "the CSV of the 'table' collective model")
    col.add_argument("--profile", default="machine.toml", help="machine profile to update "
                     "with [collectives] model = \"table\" (default machine.toml; '' for none)")
    col.add_argument("--csv", default=None, help="table to write (default PROFILE with suffix "
                     ".collectives.csv)")
    col.add_argument("--ops", default="allreduce,bcast,alltoall,barrier",
                     help="collectives to time (default allreduce,bcast,alltoall,barrier)")
    col.add_argument("--nprocs", type=_int_list, default=None,
                     help="sub-communicator sizes (default 1..size, or powers of 2 and size "
                          "above 8 processes)")
    col.add_argument("--sizes", type=parse_sizes, default=None,
                     help="vector sizes in bytes (default 0,8,64,512,4K,32K,256K,1M)")
    col.add_argument("--raw", action="store_true", help="write raw medians even where they "
                     "fall with size (profile then says monotone=false)")
    _repetition_options(col)

    fit = subparsers.add_parser("fit", help="fit measurements to models")
    fit.set_defaults(handler=run)
    fitsub = fit.add_subparsers(dest="fit_what", required=True)
    ker = fitsub.add_parser("kernel", help="kernel timings -> linear, the BSIM paper piecewise or "
                            "the MILC paper two-level cache model")
    ker.add_argument("data", help="CSV with a work column (flops, sites, cells, size, bytes, "
                     "n or x) and seconds; repeated rows are repetitions")
    ker.add_argument("--model", required=True, choices=("linear", "piecewise", "cache2"))
    ker.add_argument("--discontinuous", action="store_true",
                     help="piecewise: slope_large*x above the break (default: continuous)")
    ker.add_argument("--weighting", choices=("relative", "absolute"), default="relative",
                     help="relative (default: residual/t) or absolute (MILC paper's nls)")
    ker.add_argument("--profile", default=None, help="write [kernels.APP] KERNEL = {...} here")
    ker.add_argument("--app", default=None, help="application table (default: DATA's stem)")
    ker.add_argument("--kernel", default="kernel", help="kernel name (default 'kernel')")


def _rule(ns: argparse.Namespace) -> Any:
    from ..calibration.stats import Repetitions
    quick = ns.quick
    return Repetitions(
        min_reps=ns.min_reps if ns.min_reps is not None else (5 if quick else 10),
        max_reps=ns.max_reps if ns.max_reps is not None else (20 if quick else 200),
        rel_ci=ns.rel_ci,
        max_seconds=ns.max_seconds if ns.max_seconds is not None else (0.2 if quick else 1.0))


def _mpi() -> Any:
    try:
        from mpi4py import MPI
    except ImportError:
        raise CalibrationError("calibration needs mpi4py and an MPI library: "
                               "pip install 'bsim[mpi]' (mpi4py, mpich)") from None
    return MPI


def _calibrate_network(ns: argparse.Namespace) -> int:
    from ..calibration.network_bench import DEFAULT_SIZES, QUICK_SIZES, calibrate_network
    if not ns.no_stream and ns.stream_count < 2:   # 0 would mean --no-stream to the library
        raise CalibrationError(f"--stream-count must be an integer >= 2 (LogGP's gap and "
                               f"overhead divide by n - 1), got {ns.stream_count}; "
                               f"--no-stream skips the streams")
    if ns.cores_per_node is not None and ns.cores_per_node < 1:
        raise CalibrationError(f"--cores-per-node must be an integer >= 1, got "
                               f"{ns.cores_per_node}")
    _check_outputs(ns.profile, ("--data", ns.data), ".network.csv")
    _mpi()
    sizes = ns.sizes or (QUICK_SIZES if ns.quick else DEFAULT_SIZES)
    cal = calibrate_network(sizes=sizes, rule=_rule(ns),
                            stream_count=0 if ns.no_stream else ns.stream_count,
                            profile=ns.profile or None, data=ns.data, name=ns.name,
                            cores_per_node=ns.cores_per_node, weighting=ns.weighting)
    if cal is not None:
        sys.stdout.write(cal.report())
        for kind, fits in cal.fits.items():   # also on standard error, one line each
            for flag in fits.flags:
                warnings.warn(f"calibrate network ({kind}-node): {flag}", stacklevel=1)
    return 0


def _calibrate_collectives(ns: argparse.Namespace) -> int:
    from ..calibration.collective_bench import DEFAULT_SIZES, QUICK_SIZES, calibrate_collectives
    _check_outputs(ns.profile, ("--csv", ns.csv), ".collectives.csv")
    _mpi()
    sizes = ns.sizes or (QUICK_SIZES if ns.quick else DEFAULT_SIZES)
    ops = [o.strip() for o in ns.ops.split(",") if o.strip()]
    cal = calibrate_collectives(ops=ops, nprocs=ns.nprocs, sizes=sizes, rule=_rule(ns),
                                csv_path=ns.csv, profile=ns.profile or None,
                                monotone=not ns.raw)
    if cal is not None:
        sys.stdout.write(cal.report())
    return 0


def _check_outputs(profile: str | None, data: tuple[str, str | None], suffix: str) -> None:
    """Before any measurement: the profile and the data file can be written (the data's
    default is the profile with *suffix*), else one line naming the option and path."""
    from .failures import check_outputs
    option, path = data
    if path is None and profile:
        option, path = "--profile", str(Path(profile).with_suffix(suffix))
    try:
        check_outputs(("--profile", profile or None), (option, path))
    except ValueError as exc:   # OutputPathError: reported as calibration's own errors are
        raise CalibrationError(str(exc)) from None


def _fit_kernel(ns: argparse.Namespace) -> int:
    from ..calibration.kernels import fit_kernel, read_kernel_csv
    from ..calibration.profile import update_profile
    from ..calibration.quality import kernel_flags_key
    for option, value in (("--kernel", ns.kernel), ("--app", ns.app)):
        if value is not None and not str(value).strip():
            raise CalibrationError(f"{option} must name a kernel table key, got {value!r}")
    if ns.profile:
        _check_outputs(ns.profile, ("--profile", ns.profile), ".toml")
    data = read_kernel_csv(ns.data)
    fit = fit_kernel(data.x, data.seconds, ns.model, weighting=ns.weighting,
                     continuous=not ns.discontinuous, unit=data.unit, source=data.source)
    print(f"{ns.data}: {fit.report()}")
    for flag in fit.flags:     # also on standard error, one line each, as calibrate network
        warnings.warn(f"fit kernel {ns.data}: {flag}", stacklevel=1)
    if ns.profile:
        app = ns.app or Path(ns.data).stem
        # the flags sit beside the network's ([hardware] calibration_<pair>_flags); the
        # kernel table itself holds only what the machine loader reads
        prof = update_profile(ns.profile,
                              subtables={f"kernels.{app}": {ns.kernel: fit.table()},
                                         "hardware": {kernel_flags_key(app, ns.kernel):
                                                      list(fit.flags)}},
                              comments={f"kernels.{app}.{ns.kernel}":
                                        f"bsim fit kernel {Path(ns.data).name} --model "
                                        f"{ns.model}"})
        print(f"wrote [kernels.{app}] {ns.kernel} to {ns.profile}")
        if "network" not in prof:
            print(f"note: {ns.profile} has no [network] yet; 'bsim calibrate network "
                  f"--profile {ns.profile}' completes it into a machine profile")
    return 0


def run(ns: argparse.Namespace) -> int:
    """Run a parsed ``calibrate`` or ``fit`` command; 0 on success, 2 on a clear error."""
    try:
        if ns.command == "calibrate":
            if ns.calibrate_what == "network":
                return _calibrate_network(ns)
            return _calibrate_collectives(ns)
        if ns.command == "fit":
            return _fit_kernel(ns)
        raise CalibrationError(f"unknown command {ns.command!r}")
    except CalibrationError as exc:
        if _first_process():   # every process of an mpiexec run raises it: say it once
            print(f"bsim: error: {exc}", file=sys.stderr)
        return 2


def _first_process() -> bool:
    """False only in a process of an MPI job that is not its rank 0
    (:func:`bsim.cli.hosts.first_process`): a calibration error is raised by every process
    (they check the same options and sizes, and only rank 0 fits and writes), so rank 0
    alone reports it while every process exits with status 2."""
    from .hosts import first_process
    return first_process()


def main(argv: list[str] | None = None) -> int:
    """``python -m bsim.calibration {calibrate,fit} ...``."""
    p = argparse.ArgumentParser(prog="python -m bsim.calibration",
                                description="bsim calibration and model fitting")
    sub = p.add_subparsers(dest="command", required=True)
    add_parsers(sub)
    return run(p.parse_args(argv))

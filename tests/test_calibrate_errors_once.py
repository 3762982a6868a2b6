"""``bsim calibrate`` under mpiexec: a calibration error is one line, from rank 0, while
every process exits with status 2."""

from __future__ import annotations

import re
import sys

import pytest
from conftest import needs_mpiexec, run_mpiexec

# each process prints its status and exits with it
CALIBRATE = ("import sys\nfrom bsim.cli.calibrate import main\n"
             "status = main(['calibrate', 'network', '--stream-count', '1', '--profile', "
             "{profile!r}])\nprint('status', status, flush=True)\nsys.exit(status)\n")


@needs_mpiexec
def test_a_calibration_error_is_printed_once_under_mpiexec(tmp_path):
    """mpiexec -n 2: one 'bsim: error:' line (it was printed by each process), and every
    process still ends with status 2."""
    proc = run_mpiexec(2, CALIBRATE.format(profile=str(tmp_path / "p.toml")))
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("bsim: error:")]
    assert len(errors) == 1 and "--stream-count must be an integer >= 2" in errors[0], \
        proc.stderr
    # the two processes' lines reach mpiexec's stdout separately and may interleave
    # ("statusstatus 2\n 2"), so count the words rather than compare the lines
    assert proc.stdout.count("status") == 2, proc.stdout
    assert re.findall(r"-?\d+", proc.stdout) == ["2", "2"], proc.stdout
    assert proc.returncode != 0


@pytest.mark.parametrize("variable", ["PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"])
def test_a_calibration_error_is_printed_by_the_first_process_only(variable, tmp_path,
                                                                  monkeypatch, capsys):
    """The launcher's rank variable: rank 1 returns 2 silently, rank 0 prints the line."""
    from bsim.cli.calibrate import main as calibrate
    monkeypatch.delitem(sys.modules, "mpi4py.MPI", raising=False)
    argv = ["calibrate", "network", "--stream-count", "1", "--profile",
            str(tmp_path / "p.toml")]
    monkeypatch.setenv(variable, "1")
    assert calibrate(argv) == 2 and capsys.readouterr().err == ""
    monkeypatch.setenv(variable, "0")
    assert calibrate(argv) == 2
    assert capsys.readouterr().err.startswith("bsim: error: --stream-count")

"""A ``KeyboardInterrupt`` the program raises is its error, not the user's Ctrl-C."""

from __future__ import annotations

from bsim.cli.main import main

NET = ["--network", "hockney:latency=1e-6,bandwidth=1e9"]


def _run(prog, statement: str, capsys) -> tuple[int, str]:
    prog.write_text("import bsim\nfrom mpi4py import MPI\ncomm = MPI.COMM_WORLD\n"
                    f"{statement}\n")
    status = main(["run", str(prog), "-n", "2", *NET])
    return status, capsys.readouterr().err


def test_a_program_s_keyboard_interrupt_is_its_error_not_a_ctrl_c(tmp_path, capsys):
    """``raise KeyboardInterrupt`` in rank 1 is that rank's exception at its file:line
    (status 2), as any other; a SIGINT while a rank runs is still the simulator's Ctrl-C
    (status 130, 'interrupted').  It was reported as 'bsim: interrupted', status 130."""
    prog = tmp_path / "stop.py"
    status, err = _run(prog, "if comm.rank == 1: raise KeyboardInterrupt", capsys)
    assert status == 2, err
    assert err.strip() == (f"bsim: error: rank 1 raised KeyboardInterrupt (at {prog}:4) "
                           f"(an exception of the program, not a Ctrl-C)")
    status, err = _run(prog, "import signal\nif comm.rank == 1: "
                             "signal.raise_signal(signal.SIGINT)", capsys)
    assert status == 130 and err.startswith("bsim: interrupted at simulated t="), err


def test_simulate_reports_a_program_s_keyboard_interrupt_as_a_rank_error(tmp_path):
    """Through the Python API too: ``bsim.simulate`` raises :class:`bsim.RankError` naming
    the rank and the line (it let the KeyboardInterrupt through, as if Ctrl-C)."""
    import pytest

    import bsim

    def main():
        if bsim.MPI.COMM_WORLD.rank == 1:
            raise KeyboardInterrupt

    with pytest.raises(bsim.RankError, match=r"^rank 1 raised KeyboardInterrupt \(at .*"
                       r"test_program_interrupt.py:\d+\) \(an exception of the program"):
        bsim.simulate(main, 2)

"""The mpi4py coverage page is generated from the code and says what the code does."""

from __future__ import annotations

import re

import pytest
from conftest import ROOT

import bsim
from bsim.cli.main import main

mpi4py = pytest.importorskip("mpi4py")
from bsim.mpi.coverage import coverage, markdown  # noqa: E402

PAGE = ROOT / "docs" / "mpi_coverage.md"


def test_rows_say_what_bsim_has():
    rows = {(r.scope, r.name): r for r in coverage()}
    assert rows[("Comm", "Send")].status == "simulated"
    assert rows[("Intracomm", "Allreduce")].status == "simulated"
    assert rows[("MPI", "COMM_WORLD")].status == "simulated"
    assert rows[("Win", "Create")].status == "simulated"
    assert rows[("File", "Open")].status == "simulated"
    assert rows[("Grequest", "Start")].status == "simulated"
    for r in rows.values():   # what is not simulated says why
        assert r.status == "simulated" or r.note, r
    assert rows[("MPI", "Wtime")].note.startswith("the calling rank's simulated clock")
    from bsim.mpi.common.namespace import is_stand_in
    for r in rows.values():   # every claim checked against bsim.MPI itself
        if r.scope == "MPI":
            obj = getattr(bsim.MPI, r.name)          # every module-level name exists
            assert (r.status == "simulated") == (not is_stand_in(obj)), r
        else:
            scope = getattr(bsim.MPI, r.scope)
            # a member may live on the subclass bsim returns (Prequest.Pready: on what
            # Psend_init makes, exercised in tests/test_p2p_requests.py)
            has = not is_stand_in(scope) and (hasattr(scope, r.name) or any(
                hasattr(sub, r.name) for sub in scope.__subclasses__()))
            assert (r.status == "simulated") == has, r


def test_the_page_is_the_generated_one():
    """docs/mpi_coverage.md equals a fresh generation (against the mpi4py it names)."""
    text = PAGE.read_text(encoding="utf-8")
    version = re.search(r"generated against mpi4py (\S+)\)", text).group(1)
    if version != mpi4py.__version__:
        pytest.skip(f"page made with mpi4py {version}, this is {mpi4py.__version__}")
    assert text == markdown(coverage(), mpi4py.__version__), \
        "regenerate: python -m bsim.mpi.coverage > docs/mpi_coverage.md"


def test_bsim_list_mpi(capsys):
    assert main(["list", "mpi"]) == 0
    out = capsys.readouterr().out
    assert re.match(r"\d+ of \d+ names of mpi4py.MPI simulated", out)
    assert "Grequest" in out and "Comm " in out

"""The golden traces with the compiled modules run as Python (``BSIM_PURE_PYTHON=1``).

``tests/test_golden.py`` runs each case with what the install built (the modules of
``bsim.engine.compiled.COMPILED`` compiled where a C compiler was present); here the same
cases run with every one of them imported from its ``.py`` file and must match the same
golden files bit for bit, so the compiled and the interpreted engine give one prediction
(``tests/test_compiled_modules.py`` checks, under CI's ``BSIM_REQUIRE_COMPILED=1``, that the
install did compile them).  The K = 2 cases too: over two host processes, interpreted, the
one-process golden result.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import MPIEXEC
from test_golden import CASES, DISTRIBUTED, GOLDEN, _run


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_interpreted(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each golden case, every compiled module run as Python: the same JSON and trace."""
    monkeypatch.setenv("BSIM_PURE_PYTHON", "1")
    result, trace = _run(name, tmp_path)
    assert result == json.loads((GOLDEN / f"{name}.json").read_text()), \
        f"{name}: interpreted, the prediction differs from the golden file"
    if CASES[name][1]:
        assert trace == (GOLDEN / f"{name}.trace.json").read_text(), \
            f"{name}: interpreted, the timeline differs from the golden file"


@pytest.mark.skipif(MPIEXEC is None, reason="needs mpiexec and mpi4py (pip install 'bsim[mpi]')")
@pytest.mark.parametrize("name", DISTRIBUTED)
def test_golden_distributed_interpreted(name: str, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Over K = 2 host processes, interpreted: the one-process golden result."""
    monkeypatch.setenv("BSIM_PURE_PYTHON", "1")
    result, _ = _run(name, tmp_path, launcher=[str(MPIEXEC), "-n", "2"])
    result.pop("distributed", None)
    assert result == json.loads((GOLDEN / f"{name}.json").read_text())

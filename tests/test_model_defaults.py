"""What a run gets when it names no model level, or only part of one.

The rule (``bsim/engine/model_defaults.py``): neither protocol nor contention named is the
default level; a protocol named alone runs without contention; a contention named alone goes
with the default protocol.  Checked through what the result records, from the API and the
command line, whatever the default level is.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import bsim
from bsim import MPI
from bsim.engine.model_defaults import (DEFAULT_CONTENTION, DEFAULT_PROTOCOL,
                                        PAPER_PROTOCOL, model_settings)

NET = "hockney:latency=1e-6,bandwidth=1e9"


def pingpong() -> None:
    comm = MPI.COMM_WORLD
    buf = bsim.buffer(1000, MPI.BYTE)
    if comm.rank == 0:
        comm.Send(buf, dest=1)
        comm.Recv(buf, source=1)
    else:
        comm.Recv(buf, source=0)
        comm.Send(buf, dest=0)


def recorded(protocol: str, contention: str) -> tuple[str, str]:
    """The protocol and contention a result records when both are named."""
    res = bsim.simulate(pingpong, 2, network=NET, protocol=protocol, contention=contention)
    return res.protocol, res.contention


@pytest.mark.parametrize("protocol, contention, expected", [
    (None, None, (DEFAULT_PROTOCOL, DEFAULT_CONTENTION)),
    ("bsim", None, ("bsim", "none")),
    ("loggp", None, ("loggp", "none")),
    (None, "fluid", (DEFAULT_PROTOCOL, "fluid")),
    (None, "none", (DEFAULT_PROTOCOL, "none")),
    ("bsim", "fluid", ("bsim", "fluid")),
])
def test_what_is_not_named_is_filled_in_by_the_rule(protocol, contention, expected):
    assert model_settings(protocol, contention) == expected
    kw = {k: v for k, v in (("protocol", protocol), ("contention", contention)) if v}
    res = bsim.simulate(pingpong, 2, network=NET, **kw)
    assert (res.protocol, res.contention) == recorded(*expected)


def test_the_papers_level_is_one_flag_away():
    assert PAPER_PROTOCOL == "bsim"
    res = bsim.simulate(pingpong, 2, network=NET, protocol=PAPER_PROTOCOL)
    # the paper's receive rule, no contention: each leg costs l + s/w at the receiver
    assert res.elapsed == pytest.approx(2 * (1e-6 + 1000 / 1e9), rel=1e-12)
    assert res.contention == "none"


def _cli(*args: str, tmp_path) -> dict:
    out = tmp_path / "r.json"
    subprocess.run([sys.executable, "-m", "bsim", "run", "halo2d", "--param", "px=2",
                    "--param", "py=1", "--param", "iterations=1", "--quiet",
                    "--network", NET, "--json", str(out), *args], check=True,
                    capture_output=True, text=True, timeout=120)
    return json.loads(out.read_text())


def test_the_command_line_follows_the_same_rule(tmp_path):
    default = _cli(tmp_path=tmp_path)
    assert (default["protocol"], default["contention"]) == recorded(DEFAULT_PROTOCOL,
                                                                    DEFAULT_CONTENTION)
    named = _cli("--protocol", "bsim", tmp_path=tmp_path)
    assert (named["protocol"], named["contention"]) == recorded("bsim", "none")
    off = _cli("--contention", "none", tmp_path=tmp_path)
    assert (off["protocol"], off["contention"]) == recorded(DEFAULT_PROTOCOL, "none")


def test_a_named_level_is_both_settings_at_once():
    """``level="smpi"`` runs SMPI's rules with CM02 sharing, the pair written out; on a
    ping-pong of 1,000 bytes over Hockney (no CPU overheads) each leg is SMPI's: the bytes
    plus the 16-byte envelope move once the receive is posted (it is, at 0), a lone flow
    at full bandwidth after the latency, so 2 * (l + (s + 16)/w).  ``level="paper"`` is
    the papers' receiver rule, 2 * (l + s/w)."""
    from bsim.engine.model_defaults import LEVELS, SMPI_CONTENTION, SMPI_PROTOCOL
    assert LEVELS["smpi"] == (SMPI_PROTOCOL, SMPI_CONTENTION)
    assert LEVELS["paper"] == (PAPER_PROTOCOL, "none")
    smpi = bsim.simulate(pingpong, 2, network=NET, level="smpi")
    pair = bsim.simulate(pingpong, 2, network=NET, protocol=SMPI_PROTOCOL,
                         contention=SMPI_CONTENTION)
    assert (smpi.protocol, smpi.contention) == (pair.protocol, pair.contention)
    assert smpi.elapsed == pair.elapsed
    assert smpi.elapsed == pytest.approx(2 * (1e-6 + 1016 / 1e9), rel=1e-12)
    paper = bsim.simulate(pingpong, 2, network=NET, level="paper")
    assert (paper.protocol, paper.contention) == recorded("bsim", "none")
    assert paper.elapsed == pytest.approx(2 * (1e-6 + 1000 / 1e9), rel=1e-12)


@pytest.mark.parametrize("kw, words", [
    ({"level": "smpi", "protocol": "bsim"}, ["level 'smpi'", "protocol 'bsim'", "alone"]),
    ({"level": "paper", "contention": "fluid"}, ["level 'paper'", "contention 'fluid'"]),
    ({"level": "SMPI"}, ["paper, smpi", "'SMPI'"]),
])
def test_a_level_beside_what_it_names_or_unknown_is_refused(kw, words):
    with pytest.raises(ValueError) as err:
        bsim.simulate(pingpong, 2, network=NET, **kw)
    assert all(w in str(err.value) for w in words), str(err.value)


def test_the_command_line_names_a_level_with_one_flag(tmp_path):
    from bsim.engine.model_defaults import SMPI_CONTENTION, SMPI_PROTOCOL
    smpi = _cli("--level", "smpi", tmp_path=tmp_path)
    assert (smpi["protocol"], smpi["contention"]) == recorded(SMPI_PROTOCOL, SMPI_CONTENTION)
    both = subprocess.run([sys.executable, "-m", "bsim", "run", "halo2d", "--quiet",
                           "--level", "smpi", "--contention", "none"],
                          capture_output=True, text=True, timeout=120)
    assert both.returncode != 0
    lines = both.stderr.strip().splitlines()
    assert len(lines) == 1 and "level 'smpi'" in lines[0] and "contention 'none'" in lines[0]


def test_a_sweep_takes_a_level_and_records_it(tmp_path):
    from bsim.engine.model_defaults import SMPI_CONTENTION
    prefix = tmp_path / "sw"
    subprocess.run([sys.executable, "-m", "bsim", "sweep", "halo2d", "--param", "px=2,4",
                    "--param", "py=1", "--param", "iterations=1", "--network", NET,
                    "--level", "smpi", "-o", str(prefix), "--quiet"],
                   check=True, capture_output=True, text=True, timeout=120)
    data = json.loads(prefix.with_suffix(".json").read_text())
    assert data["level"] == "smpi"
    assert [r["settings"]["contention"] for r in data["rows"]] == [SMPI_CONTENTION] * 2


def test_bsim_list_protocols_names_the_levels_and_the_default():
    from bsim.engine.model_defaults import LEVELS
    out = subprocess.run([sys.executable, "-m", "bsim", "list", "protocols"],
                         check=True, capture_output=True, text=True, timeout=120).stdout
    lines = out[out.index("levels (--level NAME"):].splitlines()[1:]
    assert len(lines) == len(LEVELS)
    for line, (name, (protocol, contention)) in zip(lines, LEVELS.items()):
        assert line.split()[:5] == [name, "--protocol", protocol, "--contention", contention]
        assert line.endswith("(the default)") == ((protocol, contention) ==
                                                  (DEFAULT_PROTOCOL, DEFAULT_CONTENTION))

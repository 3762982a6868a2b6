"""A network table's ``ranks_per_node`` (bsim/machines/schema.py ``RANKS_PER_NODE``): the
layout of a model without ``cores``, not passed to the model.  ``petascale_torus:flat``
runs the preset's HPL at one rank per node, as its torus does (the BSIM paper, Sec. IV.B:
P x Q = 4096 processes, one per node); before, the flat variant fell back to the preset's
8 ranks a node and its own HPL stopped with AbovePeakError 4.746x.
"""

from __future__ import annotations

import json

import pytest

from bsim.cli.main import main
from bsim.machines import MachineError, load_machine, network_spec

HPL = ["--param", "n=3000", "--param", "nb=64", "--param", "p=2", "--param", "q=4",
       "--param", "verbose=false"]
NODE_PEAK = 512e9   # Sec. IV.A: 512 GFlop/s per 8-core node


def _run(machine, tmp_path, capsys, *more):
    out = tmp_path / f"{machine.replace(':', '_')}{len(more)}.json"
    status = main(["run", "hpl", "--machine", machine, "--quiet", "--json", str(out), *HPL,
                   *more])
    assert status == 0, capsys.readouterr().err
    return json.loads(out.read_text())


def test_the_flat_variant_runs_the_presets_hpl_at_one_rank_per_node(tmp_path, capsys):
    """The review's command runs: 8 ranks on 8 nodes of 512 GFlop/s, a peak of 4096 GFlop/s
    as on the torus.  With the same network (the flat spec given to the torus preset, whose
    cores = 1 places the ranks) the run is the same to the last bit: the same kernel times,
    so the same share of peak while computing, flops / (sum of calc x 512 GFlop/s), below 1.
    The torus itself shifts HPL's calls a little (its lookahead follows the messages):
    the share agrees to 0.5%."""
    flat = _run("petascale_torus:flat", tmp_path, capsys)
    assert flat["peak_flops"] == 8 * NODE_PEAK
    assert flat["flops"] == pytest.approx(2 / 3 * 3000 ** 3 + 1.5 * 3000 ** 2, rel=1e-12)
    assert flat["flops"] / flat["elapsed"] / flat["peak_flops"] < 1
    same = _run("petascale_torus", tmp_path, capsys, "--network", flat["network"])
    torus = _run("petascale_torus", tmp_path, capsys)
    share = [r["flops"] / (r["totals"]["calc"] * NODE_PEAK) for r in (flat, same, torus)]
    assert flat["per_rank"] == same["per_rank"] and flat["peak_flops"] == same["peak_flops"]
    assert share[0] == share[1] < 1
    assert torus["peak_flops"] == flat["peak_flops"]
    assert share[2] == pytest.approx(share[0], rel=5e-3)


def test_the_layout_key_is_not_passed_to_the_model():
    """The flat spec is plain Hockney; ranks_per_node gives the machine its ranks a node
    (and so each rank the whole node's 512 GFlop/s)."""
    m = load_machine("petascale_torus:flat")
    assert network_spec(m) == "hockney:latency=1e-06,bandwidth=10000000000.0"
    assert m.ranks_per_node == 1 and m.peak_flops_per_rank == NODE_PEAK


HEAD = 'name = "m"\ndescription = "d"\nsource = "s"\ncores_per_node = 4\n'
HOCKNEY = 'model = "hockney"\nlatency = 1e-6\nbandwidth = 1e9\n'


def test_a_model_with_cores_takes_ranks_per_node_as_cores(tmp_path):
    """On a torus, ranks_per_node = 2 is cores = 2 (one name for the layout everywhere)."""
    path = tmp_path / "m.toml"
    path.write_text(HEAD + '[network]\nmodel = "torus"\ndims = "2x2x2"\nranks_per_node = 2\n')
    spec = network_spec(load_machine(path))
    assert "cores=2" in spec and "ranks_per_node" not in spec
    assert load_machine(path).ranks_per_node == 2


@pytest.mark.parametrize("table, match", [
    (HOCKNEY + "ranks_per_node = 5\n", "ranks_per_node = 5 ranks per node, but a node has "
                                       "cores_per_node = 4"),
    (HOCKNEY + "ranks_per_node = 0\n", "ranks_per_node = 0 ranks per node"),
    (HOCKNEY + 'ranks_per_node = "1"\n', "ranks_per_node = '1' ranks per node"),
    ('model = "torus"\ndims = "2x2x2"\ncores = 1\nranks_per_node = 1\n',
     "has both cores and ranks_per_node"),
])
def test_a_bad_ranks_per_node_is_refused_on_load(tmp_path, table, match):
    """An int in 1..cores_per_node, and not beside cores: one line naming file and table."""
    path = tmp_path / "m.toml"
    path.write_text(HEAD + "[network]\n" + HOCKNEY + "[network_variants.flat]\n" + table)
    with pytest.raises(MachineError, match=match) as info:
        load_machine(path)
    assert "[network_variants.flat]" in str(info.value) and str(path) in str(info.value)

"""A kernel fitted over one work unit is refused where another is fed to it
(bsim/machines/kernels.py ``check_fit_unit``; an outside review, /tmp/rv_cal2 finding 3).

``bsim fit kernel`` stores the data's work column as ``unit``; a reader takes the fit only
when that is the work it feeds it: halo2d's and sage's cells, sweep3d's cell-angles (a
``cells`` column), dns3d's and HPL's flops, MILC's sites.
"""

from __future__ import annotations

import pytest

import bsim
from bsim.cli.main import main
from bsim.cli.targets import load_target
from bsim.machines import MachineError
from skeletons import registry
from skeletons.milc import milc_kernels

HEAD = ('name = "host"\ndescription = "d"\nsource = "s"\ncores_per_node = 1\n'
        '[network]\nmodel = "hockney"\nlatency = 1e-6\nbandwidth = 1e9\n')

# skeleton, its table and key, the unit it takes, and a unit it does not
PER_UNIT = [("halo2d", "halo2d", "t_point", "t_point", "cells", "bytes"),
            ("halo2d", "halo2d", "t_point", "t_point", "cells", "flops"),
            ("sweep3d", "sweep3d", "tcell", "t_cell", "cells", "bytes"),
            ("sage", "sage", "t_cell", "t_cell", "cells", "flops"),
            ("dns3d", "dns3d", "t_flop", "t_flop", "flops", "cells")]


def _profile(tmp_path, table, key, unit):
    path = tmp_path / "fit.toml"
    tag = f'unit = "{unit}", ' if unit else ""
    path.write_text(HEAD + f'[kernels.{table}]\n{key} = {{model = "linear", {tag}t0 = 1e-5, '
                           f'slope = 2.5e-9, rate = 4e8, slope_var = 0.01}}\n')
    return path


@pytest.mark.parametrize("skeleton, table, key, param, good, bad", PER_UNIT)
def test_a_per_unit_parameter_refuses_a_fit_over_another_unit(tmp_path, skeleton, table,
                                                              key, param, good, bad):
    """A linear fit of 2.5 ns per byte (or flop, or cell) is not 2.5 ns per grid point: the
    error names the file, the table and key, the fitted unit and the expected one (before,
    the slope was taken as it is, 24x off for halo2d's 24 B a point)."""
    path = _profile(tmp_path, table, key, bad)
    with pytest.raises(MachineError) as info:
        load_target(skeleton, {}, None, str(path))
    text = str(info.value)
    assert "\n" not in text
    assert f"machine file '{path}'" in text and f"[kernels.{table}] {key}" in text, text
    assert f"a fit over '{bad}'" in text and f"its work in {good}" in text, text


@pytest.mark.parametrize("skeleton, table, key, param, good, bad", PER_UNIT)
@pytest.mark.parametrize("tagged", [True, False])
def test_a_fit_over_the_right_unit_or_untagged_gives_its_slope(tmp_path, skeleton, table, key,
                                                               param, good, bad, tagged):
    """A fit over the unit the parameter takes, or one without a unit (written by hand),
    gives its slope, 2.5 ns, as seconds per unit."""
    path = _profile(tmp_path, table, key, good if tagged else "")
    assert load_target(skeleton, {}, None, str(path)).params[param] == 2.5e-9


def test_the_cli_refuses_the_reviews_per_byte_halo2d_fit_in_one_line(tmp_path, capsys):
    """The review's command: exit 2, one line, no prediction."""
    path = _profile(tmp_path, "halo2d", "t_point", "bytes")
    args = ["run", "halo2d", "--machine", str(path), "--quiet"]
    for p in ("px=2", "py=2", "nx=64", "ny=64", "iterations=2"):
        args += ["--param", p]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "a fit over 'bytes'" in err and "Traceback" not in err, err


def test_hpl_names_the_file_and_the_table_of_a_fit_over_cells(tmp_path):
    """HPL's check is the same one: a dgemm fit over cells names the file and the entry."""
    path = tmp_path / "cells.toml"
    path.write_text(HEAD + '[kernels.hpl_blas]\n'
                           'dgemm = {model = "linear", unit = "cells", slope = 1e-9}\n')
    with pytest.raises(bsim.RankError, match=r"\[kernels.hpl_blas\] dgemm: a fit over "
                                             r"'cells', but .* its work in flops"):
        bsim.simulate(registry.get("hpl").main, 1, "zero",
                      kwargs={"n": 32, "nb": 8, "p": 1, "q": 1, "kernel": str(path),
                              "verbose": False})


MILC_FIT = ('{{model = "cache2", unit = "{unit}", b1 = 4e-7, b2 = 5e-7, s = 1200.0}}')


@pytest.mark.parametrize("unit, ok", [("sites", True), ("cells", False), ("bytes", False)])
def test_milc_takes_cache2_fits_over_sites_only(tmp_path, unit, ok):
    """MILC's Eq. 1 is per lattice site: a fit over sites is read as it is, any other unit
    is refused naming the file and the first kernel."""
    path = tmp_path / "milc.toml"
    path.write_text(HEAD + "[kernels.milc]\n" + "".join(
        f"{k} = {MILC_FIT.format(unit=unit)}\n" for k in ("LL", "FL", "GF", "FF", "CG")))
    if ok:
        kernels, _ = milc_kernels(str(path))
        assert kernels["CG"] == (4e-7, 5e-7, 1200.0)
        return
    with pytest.raises(MachineError, match=rf"machine file '{path}': \[kernels.milc\] LL: a fit "
                                           rf"over '{unit}', but .* its work in sites"):
        milc_kernels(str(path))

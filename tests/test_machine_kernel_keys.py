"""A misspelt key or table name inside ``[kernels.*]`` or ``[hardware]`` of a machine file
is refused on load (docs/machines.md, "Schema"), in one line naming the file, the table,
the unknown key and the closest valid names.

Expected values come from the machine files written here and the docs, never from bsim.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bsim.cli.main import main
from bsim.machines import MACHINE_DIR, MachineError, list_machines, load_machine
from bsim.machines.kernels import MachineKernel
from skeletons import registry

HEAD = ('name = "bgp"\ndescription = "d"\nsource = "s"\ncores_per_node = 4\n'
        '[network]\nmodel = "hockney"\nlatency = 1e-6\nbandwidth = 1e9\n')
# sweep3d on a 2 x 2 grid of 8 x 8 x 4 cells, one angle, one octant: each rank updates
# (8/2) x (8/2) x 4 x 1 = 64 cell-angles.
SWEEP = ["px=2", "py=2", "nx=8", "ny=8", "nz=4", "mm=1", "mk=4", "mmi=1", "octants=1",
         "iterations=1"]


def _es40_with(tmp_path: Path, old: str, new: str, name: str = "m.toml") -> Path:
    text = (MACHINE_DIR / "es40.toml").read_text()
    assert old in text
    path = tmp_path / name
    path.write_text(text.replace(old, new, 1))
    return path


def _run_sweep3d(machine: Path, *extra: str) -> list[str]:
    args = ["run", "sweep3d", "--machine", str(machine), "--quiet", *extra]
    for p in SWEEP:
        args += ["--param", p]
    return args


def test_a_misspelt_key_in_a_kernel_table_is_refused(tmp_path, capsys):
    """es40 with ``t_cell = 60e-9`` (meant ``tcell``): status 2, one line naming the file,
    the table, the key and ``tcell`` (it ran on the generic model before, 60 ns unused)."""
    path = _es40_with(tmp_path, "\ntcell = 120e-9", "\nt_cell = 60e-9")
    assert main(_run_sweep3d(path)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert str(path) in err and "[kernels.sweep3d]" in err and "'t_cell'" in err
    assert "did you mean 'tcell'" in err


def test_the_spelt_key_is_used(tmp_path, capsys):
    """The same file with ``tcell = 60e-9`` spelt right: each rank computes 64 cell-angles
    x 60 ns = 3.84 us (the value the user wrote, not ES40's 120 ns)."""
    path = _es40_with(tmp_path, "\ntcell = 120e-9", "\ntcell = 60e-9")
    out = tmp_path / "r.json"
    assert main(_run_sweep3d(path, "--json", str(out))) == 0, capsys.readouterr().err
    result = json.loads(out.read_text())
    assert result["per_rank"]["calc"] == pytest.approx([64 * 60e-9] * 4, rel=1e-12)


def test_a_misspelt_table_name_is_refused(tmp_path, capsys):
    """``[kernels.sweep3D] tcell = 1e-6`` (wrong case): refused, naming the table and the
    right one (it ran with es40's 120 ns before, 1 us unused)."""
    path = tmp_path / "m.toml"
    path.write_text((MACHINE_DIR / "es40.toml").read_text()
                    + "\n[kernels.sweep3D]\ntcell = 1e-6\n")
    assert main(_run_sweep3d(path)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert str(path) in err and "[kernels.sweep3D]" in err
    assert "did you mean [kernels.sweep3d]" in err


@pytest.mark.parametrize("table, body, key, near", [
    ("sage", "tcell = 5e-5", "tcell", "t_cell"),
    ("halo2d", "t_pont = 1e-8", "t_pont", "t_point"),
    ("dns3d", "tflop = 1e-9", "tflop", "t_flop"),
    ("hpl_blas", "dgem = { rate = 1e9 }", "dgem", "dgemm"),
    ("milc", "float_byte = 4", "float_byte", "float_bytes"),
    ("milc", "cg = { b1 = 1e-6, b2 = 1e-6, s = 100 }", "cg", "CG"),
])
def test_every_reader_table_refuses_keys_it_does_not_read(tmp_path, table, body, key, near):
    """Each table a skeleton reads holds only the keys it reads (or a paper's recorded
    figures): a key off by a letter is named with the key meant."""
    path = tmp_path / "k.toml"
    path.write_text(HEAD + f"[kernels.{table}]\n{body}\n")
    with pytest.raises(MachineError) as info:
        load_machine(path)
    msg = str(info.value)
    assert "\n" not in msg and str(path) in msg and f"[kernels.{table}]" in msg
    assert f"unknown key {key!r}" in msg and repr(near) in msg


def test_an_applications_own_table_holds_fit_entries(tmp_path):
    """``[kernels.jacobi2d] step = {...}`` as ``bsim fit kernel --app jacobi2d`` writes it
    (docs/calibration.md) loads; a bare number there is no fit and no skeleton reads it."""
    good = tmp_path / "good.toml"
    good.write_text(HEAD + '[kernels.jacobi2d]\nstep = { model = "linear", t0 = 0.0, '
                    'slope = 2.5e-9 }\n')
    assert load_machine(good).kernels["jacobi2d"]["step"]["slope"] == 2.5e-9
    bad = tmp_path / "bad.toml"
    bad.write_text(HEAD + "[kernels.jacobi2d]\nstep = 2.5e-9\n")
    with pytest.raises(MachineError, match=r"\[kernels.jacobi2d\]: step = 2.5e-09 is not a "
                                           r"'bsim fit kernel' entry"):
        load_machine(bad)


@pytest.mark.parametrize("key, near", [
    ("peak_flop_per_core", "peak_flops_per_core"),
    ("Peak_flops_per_core", "peak_flops_per_core"),
    ("memory_bandwith_per_node", "memory_bandwidth_per_node"),
])
def test_a_misspelt_hardware_key_is_refused(tmp_path, key, near):
    """A ``[hardware]`` key one letter from a figure bsim reads is refused, naming it."""
    path = tmp_path / "h.toml"
    path.write_text(HEAD + f"[hardware]\n{key} = 3.4e9\nclock_hz = 850e6\n")
    with pytest.raises(MachineError) as info:
        load_machine(path)
    msg = str(info.value)
    assert "\n" not in msg and str(path) in msg and "[hardware]" in msg
    assert f"unknown key {key!r} (did you mean {near!r}?)" in msg


def test_free_form_hardware_facts_stay_allowed(tmp_path):
    """Facts bsim does not read (clock, caches, calibrate's ``calibration_*``) load."""
    path = tmp_path / "h.toml"
    path.write_text(HEAD + '[hardware]\nclock_hz = 850e6\nl1_bytes = 32768\n'
                    'memory_bytes_per_node = 4e9\ncalibration_host = "vm"\n')
    assert load_machine(path).hardware["memory_bytes_per_node"] == 4e9


def test_a_later_error_names_the_file_the_user_passed(tmp_path, capsys):
    """A file named ``bgp`` inside, without peak or table: the error names the file passed
    (``mine.toml``), not the preset its ``name`` collides with."""
    path = tmp_path / "mine.toml"
    path.write_text(HEAD)
    assert main(_run_sweep3d(path)) == 2
    err = capsys.readouterr().err
    assert f"machine file {str(path)!r} has no [kernels.sweep3d] tcell" in err, err
    with pytest.raises(MachineError, match=f"machine file {str(path)!r} has no network "
                                           f"variant 'p64'"):
        load_machine(f"{path}:p64")


@pytest.mark.parametrize("name", list_machines())
def test_every_preset_loads(name):
    """Every bundled preset passes the stricter check."""
    assert load_machine(name).name == name


@pytest.mark.parametrize("first", ["bsim.machines", "skeletons.sweep3d", "skeletons.milc"])
def test_tables_are_known_whatever_is_imported_first(first):
    """In a fresh process, loading es45 (sage and sweep3d tables) and petascale_torus
    (flops, hpl, hpl_blas, phase) works whichever module comes first."""
    code = (f"import {first}\nfrom bsim.machines import load_machine\n"
            "load_machine('es45'); load_machine('petascale_torus'); print('ok')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[1], timeout=120)
    assert done.stdout.strip() == "ok", done.stderr


def test_the_declared_keys_are_the_readers_keys():
    """The schema's tables are what the readers read, no more: every skeleton's key is
    declared as read by its table, HPL's kernels are hpl_kernels.KERNELS and MILC's the
    model's KERNELS with float_bytes; a MachineKernel reading an undeclared key of a
    bundled table is refused when it is made."""
    from bsim.machines.schema import KERNEL_TABLES
    from skeletons.hpl_kernels import KERNELS as BLAS
    from skeletons.models.milc import KERNELS as MILC
    read = set()
    for name in registry.names():
        mk = registry.get(name).machine_kernel
        if mk is not None:
            read |= {(mk.table, k) for k in ((mk.key,) if mk.key else mk.keys)}
    assert {(t, k) for t in ("sweep3d", "halo2d", "sage", "dns3d", "hpl_blas")
            for k in KERNEL_TABLES[t].reads} == {(t, k) for t, k in read if t != "milc"}
    assert KERNEL_TABLES["hpl_blas"].reads == BLAS
    assert set(KERNEL_TABLES["milc"].reads) == {*MILC, "float_bytes"}
    with pytest.raises(ValueError, match=r"\[kernels.sweep3d\] declares no t_cell"):
        MachineKernel(param="t_cell", table="sweep3d", key="t_cell")


def test_a_skeleton_of_ones_own_declares_its_table(tmp_path):
    """A user's MachineKernel declares its table: a number under its key then loads, a
    misspelt key is refused (before it, a number there was no 'bsim fit kernel' entry)."""
    path = tmp_path / "own.toml"
    path.write_text(HEAD + "[kernels.mystencil_t]\nt_site = 2e-9\n")
    with pytest.raises(MachineError, match="not a 'bsim fit kernel' entry"):
        load_machine(path)
    MachineKernel(param="t_site", table="mystencil_t", key="t_site", unit="site")
    assert load_machine(path).kernels["mystencil_t"]["t_site"] == 2e-9
    path.write_text(HEAD + "[kernels.mystencil_t]\nt_sit = 2e-9\n")
    with pytest.raises(MachineError, match="unknown key 't_sit' .did you mean 't_site'"):
        load_machine(path)

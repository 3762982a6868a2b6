"""The shell commands the docs show, found, split and checked (used by test_docs_examples.py).

A *shown command* is a line of a ```sh block of ``docs/*.md`` or ``README.md`` (with its
``\\`` continuations and its ``<<'EOF'`` here-document), one part of an ``&&`` chain, or
an inline code span of the prose that is a whole command: ``bsim``, ``python``,
``.venv/bin/...`` or ``mpiexec`` followed by concrete arguments (no ``FILE``/``NAME``
placeholder, no ``...``, no ``[optional]`` or ``a|b`` syntax, more than the command's
name: ```bsim run hpl --machine bgp --param n=8000``` counts, ```bsim run --json``` and
```bsim fit kernel``` are mentions of an option or a subcommand).

:func:`check` validates one command without running its work:

* ``bsim ...`` (also ``python -m bsim``, ``.venv/bin/bsim``, after ``mpiexec -n K``):
  bsim's own argument parser; for ``run`` the target with its parameters and rank
  count, the machine and the network are loaded and built as the run would
  (:func:`bsim.cli.targets.load_target`, :func:`bsim.cli.options.network_spec`);
  for ``sweep`` every point is checked as ``bsim sweep`` checks it before running
  (:func:`bsim.cli.sweep.check_points`).  A program file that the page does not ship
  (``prog.py``) is parsed only.
* ``python benchmarks/X.py ARGS`` and ``python -m MODULE ARGS``: the script or module
  exists and every ``--option`` shown is one its ``--help`` lists.
* ``python - <<'EOF'`` and ``python -c "..."``: the Python compiles.
* set-up commands (``python3 -m venv``, ``pip install``, ``python -m pytest``,
  ``mkdir``, ``.``): accepted as they are.

Anything else is an unknown command, and the check fails.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import os
import re
import shlex
import subprocess
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
SETUP = ("python3 -m venv", "pip install", "python -m pytest", "mkdir", ". ",
         "mpicc ")   # mpicc: the tutorial's C program, built for `bsim record`
_PLACEHOLDER = re.compile(r"\.\.\.|[\[\]{}<>|]|\b[A-Z][A-Z0-9_]{1,}\b|\b[A-Z]=|=[A-Z]\b"
                          r"|(?<![\w.-])[A-Z](?![\w.])")
_HELP: dict[str, set[str]] = {}


@dataclass(frozen=True)
class Shown:
    """One command as a page shows it."""

    page: str          # e.g. "docs/outputs.md"
    line: int          # 1-based line of the page where it starts
    words: tuple[str, ...]   # the command's words (continuations joined, no here-document)
    heredoc: str | None = None   # the here-document's body, for ``python - <<'EOF'``
    inline: bool = False         # an inline code span of the prose, not a ```sh block

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def text(self) -> str:
        return " ".join(self.words)


def _rel(page: Path) -> str:
    return str(page.relative_to(ROOT))


def sh_blocks(page: Path) -> list[tuple[int, str]]:
    """``(line of the block's first command, body)`` of every ```sh block of *page*."""
    text = page.read_text(encoding="utf-8")
    return [(text[:m.start()].count("\n") + 2, m.group(1))
            for m in re.finditer(r"^```sh\n(.*?)^```", text, re.S | re.M)]


def unmarked_command_blocks(page: Path) -> list[int]:
    """Lines of fenced blocks without a language whose first line is a shell command."""
    text = page.read_text(encoding="utf-8")
    found = []
    for m in re.finditer(r"^```\n(.*?)^```", text, re.S | re.M):
        first = m.group(1).lstrip().split("\n", 1)[0]
        if _is_command_start(first) and _command_words(first):
            found.append(text[:m.start()].count("\n") + 1)
    return found


def _is_command_start(line: str) -> bool:
    return bool(re.match(r"(\.venv/bin/)?(bsim|python3?|mpiexec)(\s|$)", line))


def _command_words(line: str) -> bool:
    """Whether *line* starts like a command rather than like output (``bsim t=12 ms``)."""
    words = line.split()
    if words[0].endswith("bsim"):
        return len(words) > 1 and (words[1].startswith("-") or words[1] in _subcommands())
    return True


def _subcommands() -> set[str]:
    from bsim.cli.main import build_parser
    parser = build_parser()
    for action in parser._actions:
        if action.choices and isinstance(action.choices, dict):
            return set(action.choices)
    return set()


def block_commands(page: Path, start: int, body: str) -> list[Shown]:
    """The commands of one ```sh block, in order."""
    lines = body.split("\n")
    out: list[Shown] = []
    i = 0
    while i < len(lines):
        line, first = lines[i], i
        while line.endswith("\\") and i + 1 < len(lines):
            i += 1
            line = line[:-1] + " " + lines[i].strip()
        i += 1
        heredoc = None
        m = re.search(r"<<\s*'?(\w+)'?", line)
        if m:
            end = lines.index(m.group(1), i)
            heredoc = "\n".join(lines[i:end]) + "\n"
            line = line[:m.start()].rstrip()
            i = end + 1
        words = shlex.split(line, comments=True)
        while words:
            cut = words.index("&&") if "&&" in words else len(words)
            out.append(Shown(_rel(page), start + first, tuple(words[:cut]), heredoc))
            words = words[cut + 1:]
    return out


def inline_commands(page: Path) -> list[Shown]:
    """The whole commands shown in the prose's inline code spans of *page* (module doc)."""
    text = page.read_text(encoding="utf-8")
    text = re.sub(r"^```.*?^```", lambda m: "\n" * m.group(0).count("\n"), text,
                  flags=re.S | re.M)   # fenced blocks are sh_blocks' (or not commands)
    found = []
    for m in re.finditer(r"`([^`]+)`", text):
        if "\n\n" in m.group(1):
            continue
        span = " ".join(m.group(1).split())
        if not _is_command_start(span) or _PLACEHOLDER.search(span.replace("\\|", "|")):
            continue
        words = shlex.split(span)
        if not _whole(words):
            continue
        found.append(Shown(_rel(page), text[:m.start()].count("\n") + 1, tuple(words),
                           inline=True))
    return found


def _whole(words: list[str]) -> bool:
    """Whether *words* is a command with arguments, not a mention of a (sub)command."""
    words = _strip_launcher(words)
    if words[:1] == ["bsim"]:
        rest = [w for w in words[1:] if w != "--debug"]
        if not rest:
            return False
        rest = rest[2:] if rest[0] in ("calibrate", "fit") else rest[1:]
        return bool(rest) and not rest[0].startswith("-")
    return len(words) > 1


def all_shown() -> list[Shown]:
    """Every command of every page, blocks first, then inline spans."""
    shown = []
    for page in PAGES:
        for start, body in sh_blocks(page):
            shown += block_commands(page, start, body)
        shown += inline_commands(page)
    return shown


def _strip_launcher(words: list[str]) -> list[str]:
    """*words* without ``mpiexec -n K`` and ``.venv/bin/``, with ``python -m bsim`` as
    ``bsim``."""
    if words and words[0] == "mpiexec":
        words = words[3:] if words[1:2] == ["-n"] else words[1:]
    words = [w.removeprefix(".venv/bin/") if i == 0 else w for i, w in enumerate(words)]
    if words[:3] in (["python", "-m", "bsim"], ["python3", "-m", "bsim"]):
        words = ["bsim"] + words[3:]
    return words


def is_setup(shown: Shown) -> bool:
    """Whether *shown* sets up the environment (a venv, an install, the tests, a folder)."""
    text = shown.text.removeprefix(".venv/bin/")
    return text.startswith(SETUP)


def made_by_the_page(shown: Shown) -> set[str]:
    """The files that commands shown before *shown* on its page write with ``-o FILE``
    (``bsim skeleton TRACE -o app_skel.py``, then ``bsim run app_skel.py``)."""
    made = set()
    for other in all_shown():
        if other.page == shown.page and other.line < shown.line and "-o" in other.words:
            i = other.words.index("-o")
            if i + 1 < len(other.words):
                made.add(other.words[i + 1])
    return made


def check(shown: Shown, folder: Path) -> None:
    """Validate *shown* (module doc), in *folder* as working directory; raise on a fault.
    A program file an earlier command of the page writes is parsed only."""
    if is_setup(shown):
        return
    words = _strip_launcher(list(shown.words))
    if len(words) > 2 and words[:2] == ["bsim", "run"] and words[2] in made_by_the_page(shown):
        parse_bsim(words[1:])
        return
    if ">" in words:
        words = words[:words.index(">")]
    if words[0] == "bsim":
        check_bsim(words[1:], folder)
    elif words[0] in ("python", "python3"):
        _check_python(words[1:], shown)
    else:
        raise AssertionError(f"unknown command {words[0]!r}: {shown.text}")


def parse_bsim(args: list[str]) -> argparse.Namespace:
    """bsim's parser on *args* (as ``bsim.cli.main.main`` splits them at ``--``)."""
    from bsim.cli.main import build_parser
    program_args: list[str] = []
    if "--" in args:
        cut = args.index("--")
        args, program_args = args[:cut], args[cut + 1:]
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            ns = build_parser().parse_args(args)
    except SystemExit as exc:
        raise AssertionError(f"bsim {' '.join(args)}: {err.getvalue().strip()}") from exc
    ns.program_args = program_args
    return ns


def _program(target: str, folder: Path) -> str | None:
    """*target* as a path to load: a skeleton's name as it is, a program file in *folder*
    or in the repository (``benchmarks/apps/jacobi2d.py``, which must exist); None for a
    bare ``NAME.py`` that is the reader's own program (``prog.py``, ``ring.py``)."""
    if not target.endswith(".py"):
        return target
    for base in (folder, ROOT):
        if (base / target).is_file():
            return str(base / target)
    assert "/" not in target, f"no program file {target}"
    return None


def check_bsim(args: list[str], folder: Path) -> int | None:
    """Parse and validate ``bsim ARGS``; return the run's rank count (largest point of a
    sweep), None when the command simulates nothing or its file is not shipped."""
    ns = parse_bsim(args)
    target = _program(ns.target, folder) if ns.command in ("run", "sweep") else None
    if target is None:
        return None
    with warnings.catch_warnings(), _in(folder):
        warnings.simplefilter("ignore")
        from bsim.cli import options, sweep, targets
        from netmodels import build_network
        network = options.network_spec(ns)
        if ns.command == "sweep":   # as bsim.cli.sweep.run_sweep checks before any point
            pts = sweep.points(sweep.parse_param_lists(ns.param), ns.mode)
            opts = {"network": network, "machine": ns.machine, "quiet": True}
            ranks = sweep.check_points(target, pts, opts)
            sweep.check_mode(target, pts, ranks, ns.mode)
            return max(ranks)
        loaded = targets.load_target(target, dict(ns.param), ns.program_args, ns.machine,
                                     ns.ranks, quiet=True)
        ranks = ns.ranks if ns.ranks is not None else loaded.ranks
        assert ranks is not None, f"bsim {' '.join(args)}: no rank count"
        assert loaded.ranks is None or ranks == loaded.ranks, \
            f"bsim {' '.join(args)}: -n {ranks} but the parameters give {loaded.ranks}"
        build_network(loaded.network_for(network))
        return int(ranks)


@contextlib.contextmanager
def _in(folder: Path) -> Iterator[None]:
    here = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(here)


def _check_python(args: list[str], shown: Shown) -> None:
    if args[:1] == ["-"]:
        assert shown.heredoc is not None, f"{shown.text}: no here-document"
        compile(shown.heredoc, shown.where, "exec")
    elif args[:1] == ["-c"]:
        compile(args[1], shown.where, "exec")
    elif args[:1] == ["-m"] and len(args) > 1:
        assert importlib.util.find_spec(args[1]) is not None, f"no module {args[1]}"
        _check_options([sys.executable, "-m", args[1]], args[2:], shown)
    elif "/" in args[0] or (ROOT / args[0]).is_file():
        script = ROOT / args[0]
        assert script.is_file(), f"{shown.where}: no script {args[0]}"
        _check_options([sys.executable, str(script)], args[1:], shown)


def _check_options(command: list[str], args: list[str], shown: Shown) -> None:
    """Every ``--option`` of *args* is one that *command*'s ``--help`` lists (asked after
    the words before the first option, so that a subcommand's own options are listed)."""
    wanted = {a.split("=", 1)[0] for a in args if a.startswith("--")}
    if not wanted:
        return
    lead = next((i for i, a in enumerate(args) if a.startswith("-")), len(args))
    command = command + args[:lead]
    key = " ".join(command)
    if key not in _HELP:
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        proc = subprocess.run(command + ["--help"], capture_output=True, text=True,
                              env=env, cwd=ROOT, timeout=120)
        assert proc.returncode == 0, f"{key} --help: {proc.stderr[-1000:]}"
        _HELP[key] = set(re.findall(r"--[\w-]+", proc.stdout))
    missing = wanted - _HELP[key]
    assert not missing, f"{shown.where}: {shown.text}: no option {sorted(missing)}"

"""``bsim compare A.json B.json``: what changed between two predictions (a what-if).

The files are checked before the report (:func:`read_result`): a file that is
not a bsim result, or whose per-rank lists disagree with its rank count, ends
the command with one line naming the file and what is wrong.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

__all__ = ["add_parser", "command", "read_json", "read_result", "check_result", "json_kind",
           "positive"]

TIMES = ("finish", "calc", "wait", "comm")
COUNTS = ("ops", "messages", "bytes")


def add_parser(subparsers: Any) -> None:
    """Register ``compare`` on the ``bsim`` subparsers."""
    cp = subparsers.add_parser("compare", help="compare two result JSON files (what-if)")
    cp.add_argument("a", metavar="A.json")
    cp.add_argument("b", metavar="B.json")
    cp.add_argument("--groups", type=int, default=8, help="rank groups (default 8)")
    cp.add_argument("--top", type=int, default=5, help="groups and ranks to list (default 5)")
    cp.set_defaults(handler=command)


def positive(option: str, value: int) -> int:
    """*value* if it is at least 1; else ValueError ``OPTION must be a positive integer``."""
    if value < 1:
        raise ValueError(f"{option} must be a positive integer, got {value}")
    return value


def json_kind(data: Any) -> str:
    """What a parsed JSON value is, for messages: ``an array``, ``a string``, ``null``, ..."""
    if data is None:
        return "null"
    kinds = ((bool, "a boolean"), (dict, "an object"), (list, "an array"), (str, "a string"),
             (int, "a number"), (float, "a number"))
    return next(name for cls, name in kinds if isinstance(data, cls))


def read_json(path: str | Path) -> Any:
    """The parsed content of *path*; ValueError naming the file when it is not JSON text.

    A file that cannot be read raises its ``OSError`` (which names it).
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a text file (not UTF-8)") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON: {exc.msg} at line {exc.lineno} column "
                         f"{exc.colno}") from None
    except RecursionError:
        raise ValueError(f"{path}: not valid JSON: nested too deeply") from None


def _check_per_rank(path: str | Path, per_rank: Any, ranks: int) -> None:
    """Every per-rank list is there, has *ranks* entries, and holds valid numbers."""
    if not isinstance(per_rank, dict):
        raise ValueError(f'{path}: "per_rank" must be an object of per-rank lists, got '
                         f"{json_kind(per_rank)}")
    for key in TIMES + COUNTS:
        values = per_rank.get(key)
        if not isinstance(values, list):
            raise ValueError(f'{path}: "per_rank.{key}" must be a list of {ranks} numbers, '
                             f"got {json_kind(values)}")
        if len(values) != ranks:
            raise ValueError(f'{path}: "per_rank.{key}" has {len(values)} values but "ranks" '
                             f"is {ranks}")
        for rank, v in enumerate(values):
            if key in TIMES:
                ok = (isinstance(v, (int, float)) and not isinstance(v, bool)
                      and math.isfinite(v) and v >= 0)
                want = "a finite number of seconds >= 0"
            else:
                ok = isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2 ** 63
                want = "a count (an integer >= 0)"
            if not ok:
                raise ValueError(f'{path}: "per_rank.{key}" of rank {rank} is {v!r}, not '
                                 f"{want}")


def check_result(path: str | Path, data: Any) -> Any:
    """The :class:`~bsim.outputs.result.Result` in *data* (parsed from *path*).

    Raises ValueError naming *path* and what is wrong: not an object, another
    format, a bad ``ranks``, per-rank lists missing, of the wrong length or
    holding non-numbers, ``params`` or ``host`` not objects.
    """
    from ..outputs.result import FORMAT, Result
    if not isinstance(data, dict):
        raise ValueError(f'{path}: not a bsim result: {json_kind(data)}, not an object with '
                         f'"format": "{FORMAT}"')
    if data.get("format") != FORMAT:
        raise ValueError(f"{path}: not a bsim result (format {data.get('format')!r}, "
                         f"expected {FORMAT!r})")
    ranks = data.get("ranks")
    if not isinstance(ranks, int) or isinstance(ranks, bool) or ranks < 1:
        raise ValueError(f'{path}: "ranks" must be a positive integer, got {ranks!r}')
    _check_per_rank(path, data.get("per_rank"), ranks)
    for key in ("params", "host", "pending_requests"):
        if key in data and not isinstance(data[key], dict):
            raise ValueError(f'{path}: "{key}" must be an object, got {json_kind(data[key])}')
    try:
        return Result.from_dict(data)
    except (ValueError, TypeError, KeyError, AttributeError, OverflowError) as exc:
        raise ValueError(f"{path}: not a readable bsim result: {exc}") from None


def read_result(path: str | Path) -> Any:
    """The result in the JSON file *path*, checked (:func:`check_result`)."""
    return check_result(path, read_json(path))


def command(ns: argparse.Namespace) -> int:
    """Check both files and the options, then print the report (``bsim.outputs.compare``)."""
    from ..outputs.compare import compare
    positive("--groups", ns.groups)
    positive("--top", ns.top)
    a, b = read_result(ns.a), read_result(ns.b)   # each file parsed once, checked
    sys.stdout.write(compare(a, b, groups=ns.groups, top=ns.top, paths=(ns.a, ns.b)))
    return 0

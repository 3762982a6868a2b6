"""The modes of a parameter sweep: which parameters set the rank count, and a check that a
sweep's parameters do not contradict its ``--mode`` (:mod:`bsim.cli.sweep`).

The *rank parameters* (:func:`rank_parameters`) set the rank count, the others the
problem; :func:`check_mode` refuses a strong sweep whose problem changes with the ranks
and a weak sweep of a skeleton with a process-grid rule whose problem stays fixed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

__all__ = ["rank_parameters", "check_mode"]


def _skeleton(target_name: str) -> Any:
    """The registered skeleton *target_name* names, or None for a program file."""
    if target_name.endswith(".py") or os.sep in target_name or Path(target_name).is_file():
        return None
    from skeletons import registry
    return registry.get(target_name)


def rank_parameters(target_name: str, pts: list[dict[str, str]]) -> set[str]:
    """The parameters of *pts* that set the rank count, not the problem.

    ``ranks``; for a skeleton, the parameters its ``scale`` rule sets (its process
    grid: halo2d's ``px``, ``py``) and any swept parameter that, put in place of
    its value at some point, changes the skeleton's rank rule's count there
    (MILC's ``px``..``pt`` beside ``nprocs``).  The other parameters are the problem.
    """
    names = {"ranks"}
    skel = _skeleton(target_name)
    if skel is None or skel.ranks is None:
        return names
    if skel.scale is not None:
        names |= set(skel.scale(1))

    def count(params: dict[str, str]) -> int | None:
        try:
            return int(skel.ranks(skel.resolve(params)))
        except (ValueError, KeyError, TypeError, ZeroDivisionError):
            return None

    for key in {k for p in pts for k in p} - names:
        values = {p[key] for p in pts if key in p}
        for p in (pts if len(values) > 1 else []):
            own = {k: v for k, v in p.items() if k != "ranks"}
            n = count(own)
            if n is not None and any(count({**own, key: v}) not in (None, n) for v in values):
                names.add(key)
                break
    return names


def check_mode(target_name: str, pts: list[dict[str, str]], ranks: list[int],
               mode: str) -> None:
    """Refuse a sweep whose parameters contradict *mode* (``ranks``: each point's count).

    Only for a skeleton with a process-grid rule (``scale``), whose other parameters
    are the whole problem: strong, the problem (the parameters other than
    :func:`rank_parameters`) must stay fixed while the ranks change; weak, it must
    change with them.  A program file's or SAGE's parameters may size each rank's share
    (SAGE's ``cells`` per processor: a strong sweep shrinks it as the ranks grow), so
    they are not judged.  Raises ValueError saying which parameter.
    """
    skel = _skeleton(target_name)
    if mode == "grid" or len(set(ranks)) < 2 or skel is None or skel.scale is None:
        return
    fixed = rank_parameters(target_name, pts)
    keys = list(dict.fromkeys(k for p in pts for k in p if k not in fixed))
    varying = [k for k in keys if len({p.get(k) for p in pts}) > 1]
    on = ", ".join(map(str, ranks))
    if mode == "strong" and varying:
        k = varying[0]
        raise ValueError(f"sweep --mode strong: the problem must stay fixed as the ranks "
                         f"change, but {k} changes with them ({', '.join(p[k] for p in pts)} "
                         f"on {on} ranks): use --mode weak for a problem grown with the ranks, "
                         f"or --mode grid (a baseline per problem)")
    if mode == "weak" and not varying:
        what = f"{', '.join(keys)} stay" if keys else f"{skel.name}'s problem stays"
        raise ValueError(f"sweep --mode weak: the problem must grow with the ranks, but "
                         f"{what} fixed on {on} ranks (strong scaling): use --mode strong, "
                         f"or sweep the problem size with the ranks")

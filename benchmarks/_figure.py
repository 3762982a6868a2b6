"""Line figures for the study scripts in ``benchmarks/`` (matplotlib, optional)."""

from __future__ import annotations

from collections.abc import Sequence


def line_figure(path: str, x: Sequence[float], series: dict[str, Sequence[float]], *,
                xlabel: str, ylabel: str, title: str, logx: bool = True) -> None:
    """Write a PNG of *series* (label -> y values) against *x*; say so, or why not."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no figure (pip install 'bsim[plot]')")
        return
    fig, ax = plt.subplots(figsize=(6, 4))
    for label, y in series.items():
        ax.plot(list(x), list(y), marker="o", label=label)
    if logx:
        ax.set_xscale("log", base=2)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print(f"wrote {path}")

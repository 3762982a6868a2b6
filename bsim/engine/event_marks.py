"""Where the event loop pauses: the progress hook's reports and the ``max_events`` limit.

``Engine.run_until`` counts events in a C integer and compares it with one *mark*, the
next count at which :meth:`EventMarks._periodic` must run, instead of testing the hook and
the limit at every event.
"""

from __future__ import annotations

import time as _time
from collections.abc import Callable
from typing import Any

from .hooks import PROGRESS_EVERY

__all__ = ["EventMarks"]


class EventMarks:
    """The engine's pauses (a base of ``bsim.engine.core.Engine``, which holds ``events``,
    ``host_seconds``, ``progress`` and ``limit_error``)."""

    events: int
    host_seconds: float
    progress: Any
    limit_error: Callable[[str], None]   # (bsim.engine.failures.FailureReports's)

    def _next_mark(self, done: int, max_events: int) -> int:
        """The count of events (relative to *done*, the events before this loop) at which
        :meth:`_periodic` runs next: the next multiple of ``PROGRESS_EVERY`` when there is a
        progress hook, and the event that would pass ``max_events`` (-1: never)."""
        marks = []
        if self.progress is not None:
            marks.append((done // PROGRESS_EVERY + 1) * PROGRESS_EVERY)
        if max_events > 0:
            marks.append(max(max_events + 1, done + 1))
        return min(marks) - done if marks else -1

    def _periodic(self, base: int, events: int, start: float, max_events: int
                  ) -> tuple[float, int]:
        """At every ``PROGRESS_EVERY``-th event the progress hook; before the event that
        would pass ``max_events``, the limit's error (exactly there, as a run split over host
        processes stops where their total passes it).  Returns the new start of the
        host-time measurement and the next mark (:meth:`_next_mark`)."""
        done = base + events
        self.events = done
        self.host_seconds += _time.perf_counter() - start
        start = _time.perf_counter()
        if 0 < max_events < done:   # (the event that would pass it is not processed)
            self.limit_error(f"the run reached the limit max_events={max_events:,}")
        if self.progress is not None and not done % PROGRESS_EVERY:
            self.progress(self)
        after = self._next_mark(done, max_events)
        return start, (after + events if after > 0 else -1)

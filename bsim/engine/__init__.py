"""The simulation engine: virtual ranks on a SimPy event queue, and the timing rules.

Modules, one job each (``docs/architecture.md`` draws how they fit):

* :mod:`~bsim.engine.core`: :class:`~bsim.engine.core.Engine`, the event queue
  and its loop, failure, deadlock, livelock and limit reports;
* :mod:`~bsim.engine.events`: what the queue holds and in which order;
* :mod:`~bsim.engine.rank`: :class:`~bsim.engine.rank.VirtualRank`, one greenlet,
  one clock and the calc / wait / comm account per rank, ``add_time``;
* :mod:`~bsim.engine.matching`: messages, mailboxes and MPI's matching order;
* :mod:`~bsim.engine.protocols`: when a message is paid for (``bsim``, ``loggp``);
* :mod:`~bsim.engine.collective_rules`: the dependency rules and cost sources of
  collectives, and their expansion into messages;
* :mod:`~bsim.engine.fabric`, :mod:`~bsim.engine.fabric_routes`: messages in flight
  sharing link bandwidth (``fluid``), and their paths over the links;
* :mod:`~bsim.engine.distributed`: the same run over several host processes;
* :mod:`~bsim.engine.hooks`, :mod:`~bsim.engine.noise`: tracing, progress,
  host-compute mode and OS / network noise;
* :mod:`~bsim.engine.simpy_bridge`: models written as SimPy processes, used by ranks;
* :mod:`~bsim.engine.compiled`: which modules run compiled (Cython, built by ``setup.py``)
  and ``BSIM_PURE_PYTHON=1``, which runs them as Python.

Nothing here knows mpi4py's API: :mod:`bsim.mpi` is built on top of it.
"""

from .compiled import honour_pure_python

honour_pure_python()   # before anything imports the compiled modules

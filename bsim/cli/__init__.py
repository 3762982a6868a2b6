"""The ``bsim`` command: run, list, sweep, plot, compare, calibrate and fit.

One module per subcommand, each with ``add_parser(subparsers)`` and ``command(ns)``:

* :mod:`~bsim.cli.main`: assembles the parser, dispatches, reports user errors;
* :mod:`~bsim.cli.run`, :mod:`~bsim.cli.listing`, :mod:`~bsim.cli.sweep`,
  :mod:`~bsim.cli.plot`, :mod:`~bsim.cli.compare`, :mod:`~bsim.cli.calibrate`
  (``calibrate`` and ``fit``);
* :mod:`~bsim.cli.options`: the options ``run`` and ``sweep`` share (machine,
  network, protocol, contention, collectives) and ``run``'s timeline and noise;
* :mod:`~bsim.cli.targets`: what ``bsim run`` runs (a skeleton name or a file);
* :mod:`~bsim.cli.failures`: one line and the right exit status per user-side failure.
"""

"""The ``bsim`` command: run, list, sweep, plot, compare, calibrate and fit.

* :mod:`~bsim.cli.main`: the parser and ``run`` / ``list``;
* :mod:`~bsim.cli.targets`: what ``bsim run`` runs (a skeleton name or a file);
* :mod:`~bsim.cli.output_commands`: options shared by ``run`` and ``sweep``, and
  the ``sweep``, ``plot`` and ``compare`` commands;
* :mod:`~bsim.cli.sweep`: parameter sweeps over host processes;
* :mod:`~bsim.cli.calibrate`: ``calibrate network|collectives`` and ``fit kernel``.
"""

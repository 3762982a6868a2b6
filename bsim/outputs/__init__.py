"""What a run leaves behind: the result, its files, timelines, plots and comparisons.

* :mod:`~bsim.outputs.result`: :class:`~bsim.outputs.result.Result`, the summary,
  JSON and CSV;
* :mod:`~bsim.outputs.trace`: Chrome / Perfetto timelines;
* :mod:`~bsim.outputs.plots`: matplotlib figures (breakdown, timeline, scaling);
* :mod:`~bsim.outputs.compare`: two results side by side;
* :mod:`~bsim.outputs.progress`: the progress line of long runs;
* :mod:`~bsim.outputs.scaling`: the rows of a sweep, speedup, efficiency, their files;
* :mod:`~bsim.outputs.files`: atomic writes (temporary file, then rename).
"""

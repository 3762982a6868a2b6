"""Checks of bsim against other simulators (``docs/validation.md``).

:mod:`~bsim.validation.smpi`: the same skeleton, as a C program under SimGrid's
SMPI and as a Python program under bsim, on platforms built from the same
parameters; :mod:`~bsim.validation.programs`: the Python twins of the C
programs in ``c/``.
"""

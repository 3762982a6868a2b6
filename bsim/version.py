"""bsim's version, in a leaf module (``bsim.__version__``, ``MPI.Get_library_version``)."""

__version__ = "0.1.0"

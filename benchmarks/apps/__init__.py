"""Mini-applications for end-to-end prediction checks (real mpi4py + numpy)."""

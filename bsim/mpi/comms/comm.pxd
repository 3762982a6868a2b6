# C types of comm.py's per-rank methods, for Cython (bsim/engine/compiled.py, TYPED): the
# rank they are asked about is a C VirtualRank, whose fields they read as C fields.
# (Comm stays a Python class; only the methods' locals are typed, @cython.locals.)

cimport cython
from bsim.engine.rank cimport VirtualRank

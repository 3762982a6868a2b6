# C types of settle_in_turn.py's wait, for Cython (bsim/engine/compiled.py, TYPED): the
# rank and the engine are read as C fields (@cython.locals in the .py; the function has
# comprehensions, so it stays a def), as when this wait was a method of VirtualRank.

cimport cython
from bsim.engine.engine_state cimport EngineState
from bsim.engine.rank cimport VirtualRank

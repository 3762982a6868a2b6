# The C types of fabric_solver.py's solver, for Cython: setup.py compiles the .py with this
# file beside it, Python reads only the .py.  The per-slot and per-link arrays become typed
# memoryviews and the loops over them C loops.

cimport cython

cdef class MaxMinSolver:
    cdef public object engine
    cdef public bint _weighted
    cdef public double[:] _capd, _residual, _count, _wsum
    cdef public double[:] _fw, _fnew, _fleft, _frate, _ftupd, _ffinish
    cdef public long[:] _link_mark, _fmark, _fseq
    cdef public list _users, _flinks, _free, _heap
    cdef public dict _due, _backing
    cdef public long _nslots, recomputed

    @cython.locals(users=list, wsum="double[:]", lk=Py_ssize_t)
    cpdef _close(self, Py_ssize_t s)

    cpdef bint _ends_at(self, Py_ssize_t s, double t)

    @cython.locals(users=list, mark="long[:]", fmark="long[:]", flinks=list, stack=list,
                   links=tuple, seen=list, flows=list, crossing=list, lk=Py_ssize_t,
                   s=Py_ssize_t)
    cpdef _resolve(self, list dirty, long epoch)

    @cython.locals(now=double, fheap=list, due=dict, fnew="double[:]", frate="double[:]",
                   fleft="double[:]", ftupd="double[:]", ffinish="double[:]",
                   fseq="long[:]", changed=long, s=Py_ssize_t, rate=double, old=double,
                   left=double, finish=double, bucket=list)
    cpdef _fill(self, list seen, list flows)

    @cython.locals(w=double, cap="double[:]", n=double, wsum="double[:]", lk=Py_ssize_t,
                   best=double, c=double)
    cpdef _fill_alone(self, list seen, Py_ssize_t s)

    @cython.locals(users=list, cap="double[:]", residual="double[:]", count="double[:]",
                   fw="double[:]", fnew="double[:]", flinks=list, heap=list, at=dict,
                   weighted=bint, wsum="double[:]", crossing=list, bucket=list,
                   lk=Py_ssize_t, n=double, c=double, share=double, current=double,
                   s=Py_ssize_t, w=double, rate=double, other=Py_ssize_t)
    cpdef _fill_shared(self, list seen, list flows)

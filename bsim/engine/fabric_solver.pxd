# The C types of fabric_solver.py's solver, for Cython: setup.py compiles the .py with this
# file beside it, Python reads only the .py.  The per-slot and per-link arrays become typed
# memoryviews and the loops over them C loops.

cimport cython

cdef class MaxMinSolver:
    cdef public object engine
    cdef public bint _weighted
    cdef public double[:] _capd, _residual, _count, _wsum
    cdef public double[:] _fw, _fnew, _fleft, _frate, _ftupd, _ffinish
    cdef public long[:] _link_mark, _fmark, _fseq, _flen, _flink, _flows
    cdef public long[:] _ustart, _ulen, _ucap, _ubuf, _seen, _stack
    cdef public list _free, _heap
    cdef public dict _due, _backing
    cdef public long _nslots, _slotcap, _stride, _uend, recomputed

    @cython.locals(ustart="long[:]", ucap="long[:]", ubuf="long[:]", n=Py_ssize_t,
                   room=Py_ssize_t, end=Py_ssize_t, a=Py_ssize_t, i=Py_ssize_t)
    cpdef _room(self, Py_ssize_t lk)

    @cython.locals(flink="long[:]", ustart="long[:]", ulen="long[:]", ucap="long[:]",
                   wsum="double[:]", s=Py_ssize_t, m=Py_ssize_t, k=Py_ssize_t,
                   lk=Py_ssize_t, n=Py_ssize_t)
    cpdef long _open(self, tuple links, double w, double left, double t, long seq)

    @cython.locals(ubuf="long[:]", ustart="long[:]", ulen="long[:]", wsum="double[:]",
                   k=Py_ssize_t, lk=Py_ssize_t, i=Py_ssize_t, end=Py_ssize_t)
    cpdef bint _close(self, Py_ssize_t s)

    cpdef bint _ends_at(self, Py_ssize_t s, double t)

    @cython.locals(need=Py_ssize_t, stack="long[:]", ubuf="long[:]", ustart="long[:]",
                   ulen="long[:]", mark="long[:]", fmark="long[:]", flink="long[:]",
                   flen="long[:]", stride=Py_ssize_t, seen="long[:]", flows="long[:]",
                   top=Py_ssize_t, nseen=Py_ssize_t, nflows=Py_ssize_t, lk=Py_ssize_t,
                   n=Py_ssize_t, a=Py_ssize_t, s=Py_ssize_t, k=Py_ssize_t)
    cpdef _resolve(self, list dirty, long epoch)

    @cython.locals(flows="long[:]", now=double, fheap=list, due=dict, fnew="double[:]",
                   frate="double[:]", fleft="double[:]", ftupd="double[:]",
                   ffinish="double[:]", fseq="long[:]", changed=long, s=Py_ssize_t,
                   rate=double, old=double, left=double, finish=double, bucket=list)
    cpdef _fill(self, Py_ssize_t nseen, Py_ssize_t nflows)

    @cython.locals(w=double, cap="double[:]", seen="long[:]", n=double, wsum="double[:]",
                   lk=Py_ssize_t, best=double, c=double)
    cpdef _fill_alone(self, Py_ssize_t nseen, Py_ssize_t s)

    @cython.locals(ubuf="long[:]", ustart="long[:]", ulen="long[:]", cap="double[:]",
                   residual="double[:]", count="double[:]", fw="double[:]",
                   fnew="double[:]", flink="long[:]", flen="long[:]", stride=Py_ssize_t,
                   heap=list, at=dict, weighted=bint, wsum="double[:]", bucket=list,
                   lk=Py_ssize_t, a=Py_ssize_t, n=double, c=double, share=double,
                   current=double, s=Py_ssize_t, w=double, rate=double, other=Py_ssize_t,
                   k=Py_ssize_t, last=double)
    cpdef _fill_shared(self, Py_ssize_t nseen)

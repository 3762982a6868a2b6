# The C type of request_state.py's RequestState, for Cython (bsim/engine/compiled.py, TYPED).

cimport cython

cdef extern from *:
    # cls.__new__(cls) as type.__call__ makes it before __init__: the type's own tp_new
    # slot, called in C (Cython calls RequestState.__new__(cls), cls not known when
    # compiled, as a Python method)
    """
    static PyObject *bsim_alloc_instance(PyTypeObject *cls) {
        PyObject *args = PyTuple_New(0);
        PyObject *obj;
        if (args == NULL)
            return NULL;
        obj = cls->tp_new(cls, args, NULL);
        Py_DECREF(args);
        return obj;
    }
    """
    object alloc_instance "bsim_alloc_instance" (type cls)

cdef class RequestState

cdef long long _ANY_SOURCE, _ANY_TAG

cdef class RankState:
    cdef public int open_requests

    cpdef on_resolve(self, RequestState req)

cdef class RequestState:
    cdef object __weakref__   # Request(request)'s copies are released by a weakref.finalize
    cdef public RankState owner   # (typed: read as its rank, without a test, at each use)
    cdef public object kind, call, ctx, avail
    cdef public long long src, tag   # (a world rank or ANY_SOURCE/COLLECTIVE; a tag: C)
    cdef public double cost, partner, t_post
    cdef public bint waited, lower, cancelled, handed
    cdef public object raw_envelope, payload, rinfo, error, post, flow

    @cython.locals(owner=RankState)
    cpdef resolve(self, double avail, double cost, double partner)
    @cython.locals(owner=RankState)
    cpdef finish(self, object status)

@cython.locals(req=RequestState)
cpdef RequestState new_request(object cls, RankState owner, object kind, object call)

# The C type of rank.py's VirtualRank, for Cython (bsim/engine/compiled.py, TYPED).

cimport cython
from bsim.engine.engine_state cimport EngineState
from bsim.engine.request_state cimport RankState, RequestState

cdef extern from *:
    # greenlet's C API, from the capsule greenlet._C_API as its greenlet.h reads it: entry
    # 0 of the table is the greenlet type, 4 PyGreenlet_GetCurrent and 6 PyGreenlet_Switch
    # (PyGreenlet_Type_NUM, PyGreenlet_GetCurrent_NUM, PyGreenlet_Switch_NUM) since the API
    # was added (2010); the type is checked by name before the table is trusted.
    # getcurrent() and g.switch() without a Python-level call (no method lookup, no
    # argument tuple, two C frames fewer on a waiting rank's saved stack).  Loaded at the
    # first use.
    """
    #include <string.h>
    typedef PyObject *(*bsim_greenlet_switch_t)(PyObject *, PyObject *, PyObject *);
    typedef PyObject *(*bsim_greenlet_current_t)(void);
    static void **bsim_greenlet_api = NULL;
    static int bsim_greenlet_api_load(void) {
        void **api = (void **)PyCapsule_Import("greenlet._C_API", 0);
        if (api == NULL)
            return -1;
        if (api[0] == NULL || strcmp(((PyTypeObject *)api[0])->tp_name,
                                     "greenlet.greenlet") != 0) {
            PyErr_SetString(PyExc_ImportError, "bsim: greenlet's C API table is not "
                            "the one bsim was written for; run with BSIM_PURE_PYTHON=1 "
                            "(or install with BSIM_NO_COMPILE=1)");
            return -1;
        }
        bsim_greenlet_api = api;
        return 0;
    }
    static PyObject *bsim_green_switch(PyObject *g) {
        if (bsim_greenlet_api == NULL && bsim_greenlet_api_load() < 0)
            return NULL;
        return ((bsim_greenlet_switch_t)bsim_greenlet_api[6])(g, NULL, NULL);
    }
    static PyObject *bsim_green_current(void) {
        if (bsim_greenlet_api == NULL && bsim_greenlet_api_load() < 0)
            return NULL;
        return ((bsim_greenlet_current_t)bsim_greenlet_api[4])();
    }
    """
    object green_switch "bsim_green_switch" (object g)
    object green_current "bsim_green_current" ()

cdef extern from *:
    # g.vrank of a RankGreenlet g (the caller checks the type) as a read of its slot: the
    # slot's offset is taken once from the type's member descriptor (a T_OBJECT_EX
    # member, as __slots__ makes), not looked up by name through the type at every call
    """
    #include "structmember.h"
    static Py_ssize_t bsim_vrank_offset = 0;
    static PyObject *bsim_vrank_of(PyObject *g) {
        PyObject *v;
        if (bsim_vrank_offset == 0) {
            PyObject *d = PyObject_GetAttrString((PyObject *)Py_TYPE(g), "vrank");
            if (d == NULL)
                return NULL;
            if (Py_TYPE(d) != &PyMemberDescr_Type
                    || ((PyMemberDescrObject *)d)->d_member->type != T_OBJECT_EX) {
                Py_DECREF(d);
                PyErr_SetString(PyExc_TypeError, "bsim: RankGreenlet.vrank is not a slot");
                return NULL;
            }
            bsim_vrank_offset = ((PyMemberDescrObject *)d)->d_member->offset;
            Py_DECREF(d);
        }
        v = *(PyObject **)((char *)g + bsim_vrank_offset);
        if (v == NULL) {
            PyErr_SetString(PyExc_AttributeError, "vrank");
            return NULL;
        }
        Py_INCREF(v);
        return v;
    }
    """
    object vrank_of "bsim_vrank_of" (object g)

# WaitMode's values as C integers (rank.py's _NONE, _ALL, _ANY)
cdef long _NONE, _ALL, _ANY

cdef extern from *:
    # the calling host thread, as a number (its thread state's address; the GIL is held)
    """
    #define bsim_thread_state() ((Py_ssize_t)PyThreadState_Get())
    """
    Py_ssize_t thread_state "bsim_thread_state" () noexcept

cdef class VirtualRank(RankState):
    cdef public EngineState engine
    cdef public object rank, greenlet, pending, box
    cdef public object last_arrival, waitset, coll_seq, resume, world
    # (nbytes a C integer: a send adds to it without making an int object)
    cdef public long long keybase, seq, wake_key, ops, msgs, nbytes
    cdef public double clock, calc, wait, comm, nic_free, wake_at
    # ints and chars (flags: 0 or 1 read from Python), not longs, bints or objects: with
    # its GC header the object fits obmalloc's 240-byte size class (docs/benchmarks.md,
    # memory per idle rank)
    cdef public int wait_mode, unknown, thread_level
    cdef public char finished, polled, finalized

    cpdef long long next_key(self)
    @cython.locals(key="long long")
    cpdef wake(self, double t)
    cpdef suspend(self, object call)
    cpdef sleep_until(self, double t, object call=*)
    cpdef sync(self, object call=*, bint polling=*)
    @cython.locals(mode=long, t=double)
    cpdef on_resolve(self, RequestState req)
    @cython.locals(r=RequestState, unknown=long)
    cpdef settle(self, list reqs, object call)
    cpdef settle_one(self, RequestState req, object call)
    @cython.locals(r=RequestState, t=double, wait=double, comm=double, idle=double, w=double,
                   av=double, cost=double)
    cpdef charge(self, list reqs, object call)

cdef inline _await(VirtualRank vr, object waitset, long unknown, object call)

@cython.locals(n=Py_ssize_t, i=Py_ssize_t, j=Py_ssize_t, r=RequestState, q=RequestState,
               a=double, b=double, out=list, prev=double, ordered=bint)
cpdef list _by_avail(list reqs)

# the rank the engine switched into and the thread that switched (rank.py: running_rank)
cdef VirtualRank _running
cdef Py_ssize_t _running_thread
cpdef enter_rank(VirtualRank vr)
cdef VirtualRank running_rank()
cdef refuse_other_greenlet(VirtualRank vr, object call)

@cython.locals(vr=VirtualRank)
cpdef current()

@cython.locals(r=VirtualRank, eng=EngineState)
cpdef add_time(object seconds)

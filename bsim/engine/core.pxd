# The C types core.py's event loop declares (@cython.locals), for Cython
# (bsim/engine/compiled.py, TYPED).

# (matching.deliver is not cimported: the loop calls it as a module global, which the event
# queue's tests replace; a C call measured no faster on the halo)
cimport cython
from cpython.list cimport PyList_GET_ITEM
from cpython.exc cimport PyErr_Clear, PyErr_Occurred
from cpython.long cimport PyLong_CheckExact
from cpython.object cimport PyObject, Py_TYPE
from bsim.engine.matching cimport Mailbox, Message, order_by_key
from bsim.engine.request_state cimport RequestState
from bsim.engine.rank cimport VirtualRank, green_switch

@cython.locals(p="long long")
cdef inline bint _ahead(tuple head, long long prio, long long key) except -1


cdef extern from *:
    # a hint to the CPU to start loading a cache line (no effect on what the program does)
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define bsim_prefetch(p) __builtin_prefetch((const void *)(p))
    #else
    #define bsim_prefetch(p) ((void)(p))
    #endif
    #define bsim_prefetch_items(lst) bsim_prefetch(((PyListObject *)(lst))->ob_item)
    """
    void prefetch "bsim_prefetch" (const void *p) noexcept nogil
    Py_ssize_t ssize_of "PyLong_AsSsize_t" (PyObject *o) noexcept   # (-1 on error, kept)
    void prefetch_items "bsim_prefetch_items" (list lst) noexcept


cdef inline void prefetch_deliveries(list batch, Py_ssize_t i, Py_ssize_t n,
                                     list ranks) noexcept:
    # The objects the deliveries after message i will touch, a few messages ahead, in the
    # order each is found: the message, its destination's number, the destination rank,
    # its mailbox, the mailbox's list of posted receives, that list's items, the first
    # posted receives and their buffers.  Each step reads only what the step of an
    # earlier message asked for (borrowed pointers, no reference counts), so the loads of
    # several deliveries overlap instead of each delivery waiting on its own in turn.  At
    # 4,096 ranks and more, a rank's objects are out of the caches when a message reaches
    # it.  Hints only: what the loop does is the same without them.
    cdef PyObject *p
    cdef Py_ssize_t k, j
    cdef list posted
    if i + 12 < n:
        p = PyList_GET_ITEM(batch, i + 12)
        prefetch(p)
        prefetch(<char *>p + 64)
    if i + 10 < n:
        p = PyList_GET_ITEM(batch, i + 10)
        if <PyObject *>Py_TYPE(<object>p) == <PyObject *>Message:
            prefetch(<PyObject *>(<Message>p).dst)
    p = _rank_of(batch, i + 8, n, ranks)
    if p != NULL:
        prefetch(p)
        prefetch(<char *>p + 64)
    p = _rank_of(batch, i + 6, n, ranks)
    if p != NULL:
        prefetch(<PyObject *>(<VirtualRank>p).box)
    posted = _posted_of(batch, i + 5, n, ranks)
    if posted is not None:
        prefetch(<PyObject *>posted)
    posted = _posted_of(batch, i + 4, n, ranks)
    if posted:
        prefetch_items(posted)
    posted = _posted_of(batch, i + 3, n, ranks)
    if posted:
        k = min(len(posted), 4)
        for j in range(k):
            p = PyList_GET_ITEM(posted, j)
            prefetch(p)
            prefetch(<char *>p + 64)
            prefetch(<char *>p + 128)
    posted = _posted_of(batch, i + 1, n, ranks)
    if posted:
        k = min(len(posted), 4)
        for j in range(k):
            prefetch(<PyObject *>(<RequestState>PyList_GET_ITEM(posted, j)).rinfo)


cdef inline PyObject *_rank_of(list batch, Py_ssize_t k, Py_ssize_t n, list ranks) noexcept:
    # the destination rank of message k of the batch (NULL past its end, or for anything
    # but a message to a rank number of the ranks list)
    cdef PyObject *p
    cdef PyObject *dst
    cdef Py_ssize_t d
    if k >= n:
        return NULL
    p = PyList_GET_ITEM(batch, k)
    if <PyObject *>Py_TYPE(<object>p) != <PyObject *>Message:
        return NULL
    dst = <PyObject *>(<Message>p).dst
    if not PyLong_CheckExact(<object>dst):
        return NULL
    d = ssize_of(dst)
    if d == -1 and PyErr_Occurred() != NULL:   # an int beyond a C one: not a rank
        PyErr_Clear()
        return NULL
    if d < 0 or d >= len(ranks):
        return NULL
    return PyList_GET_ITEM(ranks, d)


cdef inline list _posted_of(list batch, Py_ssize_t k, Py_ssize_t n, list ranks) noexcept:
    # the posted receives of message k's destination (None when it has no mailbox)
    cdef PyObject *p = _rank_of(batch, k, n, ranks)
    cdef Mailbox box
    if p == NULL:
        return None
    box = <Mailbox>(<VirtualRank>p).box
    if box is None:
        return None
    return box.posted


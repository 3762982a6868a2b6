# The C types core.py's event loop declares (@cython.locals), for Cython
# (bsim/engine/compiled.py, TYPED).

# (matching.deliver is cimported as deliver_in_c: the loop calls it in C unless the module
# global ``deliver``, which the event queue's tests replace, is not matching's own)
cimport cython
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.object cimport PyObject, Py_TYPE
from bsim.engine.matching cimport (_TAKEN_EARLY, Mailbox, Message, order_by_key,
                                   order_wakeups)
from bsim.engine.matching cimport deliver as deliver_in_c
from bsim.engine.engine_state cimport ModuleWatch
from bsim.engine.request_state cimport RequestState
from bsim.engine.rank cimport VirtualRank, enter_rank, green_switch

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
    void prefetch_items "bsim_prefetch_items" (PyObject *lst) noexcept


# the destination ranks of the batch's next messages, by message index modulo 16 (borrowed
# pointers; NULL for a message that is not to a rank), written by prefetch_deliveries
cdef PyObject *_next_ranks[16]


cdef inline void prefetch_deliveries(list batch, Py_ssize_t i, Py_ssize_t n,
                                     list ranks) noexcept:
    # The objects the deliveries after message i will touch, a few messages ahead, in the
    # order each is found: the message, its destination rank, the rank's mailbox, the
    # mailbox's list of posted receives, that list's items, the first posted receives and
    # their buffers.  Each step reads only what the step of an earlier message asked for
    # (borrowed pointers, no reference counts), so the loads of several deliveries
    # overlap instead of each delivery waiting on its own in turn.  At 4,096 ranks and
    # more, a rank's objects are out of the caches when a message reaches it.  Hints
    # only: what the loop does is the same without them.
    cdef PyObject *p
    cdef PyObject *posted
    cdef Py_ssize_t k, j, m
    if i == 0:   # a batch's first messages: their ranks, without the steps before
        for k in range(min(n, 8)):
            _next_ranks[k] = _rank_of(batch, k, ranks)
    if i + 12 < n:
        p = PyList_GET_ITEM(batch, i + 12)
        prefetch(p)
        prefetch(<char *>p + 64)
    if i + 8 < n:
        p = _next_ranks[(i + 8) & 15] = _rank_of(batch, i + 8, ranks)
        if p != NULL:
            prefetch(p)
            prefetch(<char *>p + 64)
    if i + 6 < n:
        p = _next_ranks[(i + 6) & 15]
        if p != NULL:
            if (<Message>PyList_GET_ITEM(batch, i + 6)).visible == _TAKEN_EARLY:
                _next_ranks[(i + 6) & 15] = NULL   # a receive took it: nothing to deliver
            else:
                prefetch(<PyObject *>(<VirtualRank>p).box)
    if i + 5 < n:
        posted = _posted_of(_next_ranks[(i + 5) & 15])
        if posted != NULL:
            prefetch(posted)
    if i + 4 < n:
        posted = _posted_of(_next_ranks[(i + 4) & 15])
        if posted != NULL:
            prefetch_items(posted)
    if i + 3 < n:
        posted = _posted_of(_next_ranks[(i + 3) & 15])
        if posted != NULL:
            m = min(PyList_GET_SIZE(<object>posted), 4)
            for j in range(m):
                p = PyList_GET_ITEM(<object>posted, j)
                prefetch(p)
                prefetch(<char *>p + 64)
                prefetch(<char *>p + 128)
    if i + 1 < n:
        posted = _posted_of(_next_ranks[(i + 1) & 15])
        if posted != NULL:
            m = min(PyList_GET_SIZE(<object>posted), 4)
            for j in range(m):
                prefetch(<PyObject *>(<RequestState>PyList_GET_ITEM(<object>posted, j)).rinfo)


cdef inline PyObject *_rank_of(list batch, Py_ssize_t k, list ranks) noexcept:
    # the destination rank of message k of the batch (NULL for anything but a message to
    # a rank number of the ranks list)
    cdef PyObject *p = PyList_GET_ITEM(batch, k)
    cdef long long d
    if <PyObject *>Py_TYPE(<object>p) != <PyObject *>Message:
        return NULL
    d = (<Message>p).dst   # (a C integer)
    if d < 0 or d >= PyList_GET_SIZE(ranks):
        return NULL
    return PyList_GET_ITEM(ranks, d)


cdef inline PyObject *_posted_of(PyObject *rank) noexcept:
    # the list of posted receives of *rank* (a VirtualRank or NULL): NULL when it has none
    cdef PyObject *box
    cdef PyObject *posted
    if rank == NULL:
        return NULL
    box = <PyObject *>(<VirtualRank>rank).box
    if box == <PyObject *>None:
        return NULL
    posted = <PyObject *>(<Mailbox>box).posted
    if posted == <PyObject *>None:
        return NULL
    return posted

# The C types of matching.py, for Cython (bsim/engine/compiled.py, TYPED).

cimport cython
from bsim.engine.rank cimport VirtualRank
from bsim.engine.request_state cimport RequestState
from bsim.mpi.data.buffer_info cimport BufInfo
from bsim.engine.protocol_state cimport ProtocolState
from bsim.engine.engine_state cimport EngineState

cdef extern from *:
    # ``del lst[i]`` (0 <= i < len(lst), checked by the caller) for a queue's match: the
    # items after i moved down one, the item's reference dropped last, without the
    # generic path's slice assignment.  The list keeps its allocation (list's own would
    # shrink one less than half full): a rank's queues fill again at its next calls.
    """
    static void bsim_list_del(PyObject *lst, Py_ssize_t i) {
        PyListObject *l = (PyListObject *)lst;
        PyObject *item = l->ob_item[i];
        Py_ssize_t n = Py_SIZE(l);
        memmove(&l->ob_item[i], &l->ob_item[i + 1], (size_t)(n - i - 1) * sizeof(PyObject *));
        Py_SET_SIZE(l, n - 1);
        Py_DECREF(item);
    }
    """
    void list_del "bsim_list_del" (list lst, Py_ssize_t i)

cdef class Message:
    cdef public object ctx, nbytes, payload, lower, sreq
    cdef public long long src, dst, src_crank, tag   # (world ranks, its rank, its tag: C)
    cdef public long long key
    cdef public double t_send, visible
    cdef public bint rendezvous

cdef double _IN_FLIGHT, _TAKEN_EARLY
cdef long long _ANY_SOURCE, _ANY_TAG

cdef class Mailbox:
    cdef public list posted, unexpected, probers, in_flight

@cython.locals(box=Mailbox, posted=list, req=RequestState, i=Py_ssize_t, proto=ProtocolState)
cpdef deliver(VirtualRank dst, Message msg, double now)

@cython.locals(box=Mailbox, unexpected=list, msg=Message, i=Py_ssize_t, proto=ProtocolState,
               posted=list)
cpdef post_receive(VirtualRank vr, RequestState req, bint blocking=*)

@cython.locals(sbox=Mailbox, sent=list, msg=Message, r=RequestState, n=Py_ssize_t,
               j=Py_ssize_t, src=Py_ssize_t, me=Py_ssize_t, tag=Py_ssize_t, eng=EngineState,
               sender=VirtualRank)
cdef bint _take_in_flight(VirtualRank vr, Mailbox box, RequestState req) except -1

@cython.locals(box=Mailbox, sent=list, last=Message, n=Py_ssize_t, k=Py_ssize_t,
               first=Message)
cpdef note_in_flight(VirtualRank vr, Message msg)

@cython.locals(info=BufInfo)
cpdef transfer_payload(RequestState req, Message msg)

@cython.locals(cost=double)
cpdef bsim_matched(ProtocolState p, RequestState req, Message msg)

@cython.locals(msg=Message)
cpdef Message new_message(object ctx, long long src, long long dst, long long src_crank,
                          long long tag, object nbytes, object payload, bint lower)

@cython.locals(n=Py_ssize_t, i=Py_ssize_t, j=Py_ssize_t, msg=Message, key="long long")
cpdef order_by_key(list batch)
cpdef order_wakeups(list batch)


cdef extern from *:
    # A wake-up batch, a list of (key, rank) tuples with distinct int keys, sorted by key in
    # C: the order list.sort() gives it, without a Python comparison of two tuples (and of
    # two ints in them) per step.  A natural merge sort of the keys' runs (a batch comes
    # in runs: ranks wake in the order their last message arrives), stable; anything but
    # such tuples, or no memory for the copy, leaves the work to list.sort().
    """
    #include <string.h>
    typedef struct { long long key; PyObject *item; } bsim_keyed;

    static void bsim_merge_runs(bsim_keyed *src, bsim_keyed *dst, Py_ssize_t lo,
                                Py_ssize_t mid, Py_ssize_t hi) {
        Py_ssize_t i = lo, j = mid, k = lo;
        while (i < mid && j < hi)
            dst[k++] = src[j].key < src[i].key ? src[j++] : src[i++];
        while (i < mid)
            dst[k++] = src[i++];
        while (j < hi)
            dst[k++] = src[j++];
    }

    static int bsim_sort_keyed(PyObject *lst) {
        Py_ssize_t n = PyList_GET_SIZE(lst), i, r, w, nruns = 1;
        PyObject **items = ((PyListObject *)lst)->ob_item;
        bsim_keyed *a, *b, *t;
        Py_ssize_t *runs;
        long long key, prev = 0;
        int overflow;
        for (i = 0; i < n; i++) {   /* the keys, and whether they are in order already */
            PyObject *tup = items[i], *k;
            if (!PyTuple_CheckExact(tup) || PyTuple_GET_SIZE(tup) != 2)
                return PyList_Sort(lst);
            k = PyTuple_GET_ITEM(tup, 0);
            if (!PyLong_CheckExact(k))
                return PyList_Sort(lst);
            /* (PyLong_AsLongLong reads an int of two or more digits, a key past 2**30,
               through a byte array: this one reads its digits) */
            key = PyLong_AsLongLongAndOverflow(k, &overflow);
            if (overflow)   /* beyond a C long long */
                return PyList_Sort(lst);
            if (i > 0 && key <= prev) {
                if (key == prev)   /* equal keys: list.sort() compares the ranks */
                    return PyList_Sort(lst);
                nruns++;
            }
            prev = key;
        }
        if (nruns == 1)
            return 0;
        a = (bsim_keyed *)PyMem_Malloc(2 * n * sizeof(bsim_keyed));
        runs = (Py_ssize_t *)PyMem_Malloc((nruns + 1) * sizeof(Py_ssize_t));
        if (a == NULL || runs == NULL) {
            PyMem_Free(a);
            PyMem_Free(runs);
            return PyList_Sort(lst);
        }
        b = a + n;
        r = 0;
        for (i = 0; i < n; i++) {
            a[i].item = items[i];
            a[i].key = PyLong_AsLongLongAndOverflow(PyTuple_GET_ITEM(items[i], 0), &overflow);
            if (i == 0 || a[i].key < a[i - 1].key)
                runs[r++] = i;
        }
        runs[r] = n;
        while (nruns > 1) {   /* merge runs pairwise, a into b, until one is left */
            for (r = 0, w = 0; r < nruns; r += 2, w++) {
                if (r + 1 < nruns)
                    bsim_merge_runs(a, b, runs[r], runs[r + 1], runs[r + 2]);
                else
                    memcpy(b + runs[r], a + runs[r], (n - runs[r]) * sizeof(bsim_keyed));
                runs[w] = runs[r];
            }
            runs[w] = n;
            nruns = w;
            t = a; a = b; b = t;
        }
        for (i = 0; i < n; i++)   /* the same objects, in key order: no reference counts */
            items[i] = a[i].item;
        PyMem_Free(a < b ? a : b);
        PyMem_Free(runs);
        return 0;
    }
    """
    int sort_keyed "bsim_sort_keyed" (list lst) except -1

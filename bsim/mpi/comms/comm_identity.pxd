# C types of comm_identity.py, for Cython (bsim/engine/compiled.py, TYPED).

from bsim.engine.rank cimport VirtualRank

cdef class CommIdentity:
    cdef public object context, coll_ctx, kind, _group, _index, freed_by

    cdef int _refuse_null_or_freed(self, VirtualRank vr) except -1
    cpdef object rank_of(self, VirtualRank vr)
    cpdef object size_of(self, VirtualRank vr)
    cpdef object world_rank(self, object crank, VirtualRank vr)
    cpdef object coll_context(self, VirtualRank vr)
    cpdef object coll_identity(self, VirtualRank vr)
    cpdef object members(self, VirtualRank vr)

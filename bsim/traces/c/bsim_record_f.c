/* Fortran bindings of bsim's recording library (built with bsim_record.c, one library).
 *
 * An MPI's Fortran layer (Open MPI's libmpi_mpifh, MPICH's libmpifort) calls PMPI_ itself,
 * so a Fortran program's calls never reach the C wrappers of bsim_record.c.  This file
 * defines the Fortran symbols of the recorded calls (mpi_send_ as gfortran names them, and
 * mpi_send__, mpi_send, MPI_SEND as other compilers do) for `include 'mpif.h'` and
 * `use mpi`; each converts its Fortran handles (MPI_Comm_f2c, MPI_Type_f2c, MPI_Op_f2c,
 * MPI_Request_f2c; MPI_Status_c2f back) and calls the C MPI_ function, which the
 * preloaded library resolves to its own wrapper: one record per call, as from C.
 * Fortran's MPI_IN_PLACE and MPI_BOTTOM are the addresses of the MPI's common blocks,
 * found by name at run time (Open MPI: mpi_fortran_in_place_, mpi_fortran_bottom_;
 * MPICH: the pointers MPIR_F_MPI_IN_PLACE, MPIR_F_MPI_BOTTOM).  The mpi_f08 module's
 * bindings (mpi_send_f08) are not wrapped. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdlib.h>

typedef MPI_Fint F;
#define FSTATUS ((int)(sizeof(MPI_Status) / sizeof(MPI_Fint)))   /* MPI_STATUS_SIZE */

/* Define the binding once (NAME_) and its three other spellings as aliases. */
#define FORT(low, UP, params)                                                              \
  void low##_ params;                                                                      \
  void low##__ params __attribute__((alias(#low "_")));                                    \
  void low params __attribute__((alias(#low "_")));                                        \
  void UP params __attribute__((alias(#low "_")));                                         \
  void low##_ params

static void *common(const char *const names[], const char *pointer) {
  for (int i = 0; names[i]; i++) {
    void *a = dlsym(RTLD_DEFAULT, names[i]);
    if (a) return a;
  }
  void **p = dlsym(RTLD_DEFAULT, pointer);   /* MPICH keeps the address in a variable */
  return p ? *p : NULL;
}

/* A Fortran buffer argument as C sees it: MPI_IN_PLACE and MPI_BOTTOM mapped. */
static void *fbuf(void *b) {
  static const char *const in_place[] = {"mpi_fortran_in_place_", "mpi_fortran_in_place__",
                                         "mpi_fortran_in_place", "MPI_FORTRAN_IN_PLACE", 0};
  static const char *const bottom[] = {"mpi_fortran_bottom_", "mpi_fortran_bottom__",
                                       "mpi_fortran_bottom", "MPI_FORTRAN_BOTTOM", 0};
  if (b && b == common(in_place, "MPIR_F_MPI_IN_PLACE")) return MPI_IN_PLACE;
  if (b && b == common(bottom, "MPIR_F_MPI_BOTTOM")) return MPI_BOTTOM;
  return b;
}

static MPI_Status *cstatus(F *f, MPI_Status *mine) {
  return f == MPI_F_STATUS_IGNORE ? MPI_STATUS_IGNORE : mine;
}

static void fstatus(const MPI_Status *c, F *f) {
  if (f != MPI_F_STATUS_IGNORE) MPI_Status_c2f(c, f);
}

#define COMM(x) MPI_Comm_f2c(*(x))
#define TYPE(x) MPI_Type_f2c(*(x))

FORT(mpi_init, MPI_INIT, (F *ierr)) { *ierr = MPI_Init(NULL, NULL); }

FORT(mpi_init_thread, MPI_INIT_THREAD, (F *req, F *prov, F *ierr)) {
  int p = 0;
  *ierr = MPI_Init_thread(NULL, NULL, *req, &p);
  *prov = p;
}

FORT(mpi_finalize, MPI_FINALIZE, (F *ierr)) { *ierr = MPI_Finalize(); }

#define FP2P(low, UP, NAME)                                                                \
  FORT(low, UP, (void *b, F *n, F *t, F *dest, F *tag, F *c, F *ierr)) {                   \
    *ierr = MPI_##NAME(fbuf(b), *n, TYPE(t), *dest, *tag, COMM(c));                        \
  }
FP2P(mpi_send, MPI_SEND, Send)
FP2P(mpi_ssend, MPI_SSEND, Ssend)
FP2P(mpi_rsend, MPI_RSEND, Rsend)
FP2P(mpi_bsend, MPI_BSEND, Bsend)

#define FIP2P(low, UP, NAME)                                                               \
  FORT(low, UP, (void *b, F *n, F *t, F *dest, F *tag, F *c, F *req, F *ierr)) {           \
    MPI_Request r;                                                                         \
    *ierr = MPI_##NAME(fbuf(b), *n, TYPE(t), *dest, *tag, COMM(c), &r);                    \
    *req = MPI_Request_c2f(r);                                                             \
  }
FIP2P(mpi_isend, MPI_ISEND, Isend)
FIP2P(mpi_issend, MPI_ISSEND, Issend)
FIP2P(mpi_ibsend, MPI_IBSEND, Ibsend)
FIP2P(mpi_irsend, MPI_IRSEND, Irsend)
FIP2P(mpi_irecv, MPI_IRECV, Irecv)

FORT(mpi_recv, MPI_RECV, (void *b, F *n, F *t, F *src, F *tag, F *c, F *st, F *ierr)) {
  MPI_Status s;
  *ierr = MPI_Recv(fbuf(b), *n, TYPE(t), *src, *tag, COMM(c), cstatus(st, &s));
  fstatus(&s, st);
}

FORT(mpi_sendrecv, MPI_SENDRECV, (void *sb, F *sn, F *stype, F *dest, F *stag, void *rb,
                                  F *rn, F *rtype, F *src, F *rtag, F *c, F *st, F *ierr)) {
  MPI_Status s;
  *ierr = MPI_Sendrecv(fbuf(sb), *sn, TYPE(stype), *dest, *stag, fbuf(rb), *rn, TYPE(rtype),
                       *src, *rtag, COMM(c), cstatus(st, &s));
  fstatus(&s, st);
}

FORT(mpi_sendrecv_replace, MPI_SENDRECV_REPLACE, (void *b, F *n, F *t, F *dest, F *stag,
                                                  F *src, F *rtag, F *c, F *st, F *ierr)) {
  MPI_Status s;
  *ierr = MPI_Sendrecv_replace(fbuf(b), *n, TYPE(t), *dest, *stag, *src, *rtag, COMM(c),
                               cstatus(st, &s));
  fstatus(&s, st);
}

FORT(mpi_wait, MPI_WAIT, (F *req, F *st, F *ierr)) {
  MPI_Status s;
  MPI_Request r = MPI_Request_f2c(*req);
  *ierr = MPI_Wait(&r, cstatus(st, &s));
  *req = MPI_Request_c2f(r);
  fstatus(&s, st);
}

FORT(mpi_test, MPI_TEST, (F *req, F *flag, F *st, F *ierr)) {
  MPI_Status s;
  MPI_Request r = MPI_Request_f2c(*req);
  int done = 0;
  *ierr = MPI_Test(&r, &done, cstatus(st, &s));
  *req = MPI_Request_c2f(r);
  *flag = done ? 1 : 0;     /* gfortran's .true. */
  if (done) fstatus(&s, st);
}

/* Waitall, Testall, Waitany: the Fortran request array converted and written back. */
static int many(int which, F *n, F *reqs, F *flag, F *index, F *st) {
  int k = *n, rc, done = 0, idx = MPI_UNDEFINED;
  MPI_Request *r = malloc(sizeof *r * (k > 0 ? k : 1));
  MPI_Status *s = malloc(sizeof *s * (k > 0 ? k : 1));
  int ignore = st == MPI_F_STATUSES_IGNORE || st == MPI_F_STATUS_IGNORE;
  for (int i = 0; i < k; i++) r[i] = MPI_Request_f2c(reqs[i]);
  if (which == 0) rc = MPI_Waitall(k, r, ignore ? MPI_STATUSES_IGNORE : s), done = 1;
  else if (which == 1) rc = MPI_Testall(k, r, &done, ignore ? MPI_STATUSES_IGNORE : s);
  else rc = MPI_Waitany(k, r, &idx, ignore ? MPI_STATUS_IGNORE : s), done = 1;
  for (int i = 0; i < k; i++) reqs[i] = MPI_Request_c2f(r[i]);
  if (which == 2) {
    *index = idx == MPI_UNDEFINED ? idx : idx + 1;   /* Fortran counts from 1 */
    if (!ignore && idx != MPI_UNDEFINED) MPI_Status_c2f(s, st);
  } else if (!ignore && done) {
    for (int i = 0; i < k; i++) MPI_Status_c2f(&s[i], st + i * FSTATUS);
  }
  if (flag) *flag = done ? 1 : 0;
  free(r); free(s);
  return rc;
}

FORT(mpi_waitall, MPI_WAITALL, (F *n, F *reqs, F *st, F *ierr)) {
  *ierr = many(0, n, reqs, NULL, NULL, st);
}

FORT(mpi_testall, MPI_TESTALL, (F *n, F *reqs, F *flag, F *st, F *ierr)) {
  *ierr = many(1, n, reqs, flag, NULL, st);
}

FORT(mpi_waitany, MPI_WAITANY, (F *n, F *reqs, F *index, F *st, F *ierr)) {
  *ierr = many(2, n, reqs, NULL, index, st);
}

FORT(mpi_barrier, MPI_BARRIER, (F *c, F *ierr)) { *ierr = MPI_Barrier(COMM(c)); }

FORT(mpi_bcast, MPI_BCAST, (void *b, F *n, F *t, F *root, F *c, F *ierr)) {
  *ierr = MPI_Bcast(fbuf(b), *n, TYPE(t), *root, COMM(c));
}

FORT(mpi_reduce, MPI_REDUCE, (void *sb, void *rb, F *n, F *t, F *op, F *root, F *c,
                              F *ierr)) {
  *ierr = MPI_Reduce(fbuf(sb), fbuf(rb), *n, TYPE(t), MPI_Op_f2c(*op), *root, COMM(c));
}

FORT(mpi_allreduce, MPI_ALLREDUCE, (void *sb, void *rb, F *n, F *t, F *op, F *c, F *ierr)) {
  *ierr = MPI_Allreduce(fbuf(sb), fbuf(rb), *n, TYPE(t), MPI_Op_f2c(*op), COMM(c));
}

#define FROOTED(low, UP, NAME)                                                             \
  FORT(low, UP, (void *sb, F *sn, F *st, void *rb, F *rn, F *rt, F *root, F *c, F *ierr)) { \
    *ierr = MPI_##NAME(fbuf(sb), *sn, TYPE(st), fbuf(rb), *rn, TYPE(rt), *root, COMM(c));  \
  }
FROOTED(mpi_gather, MPI_GATHER, Gather)
FROOTED(mpi_scatter, MPI_SCATTER, Scatter)

#define FALL(low, UP, NAME)                                                                \
  FORT(low, UP, (void *sb, F *sn, F *st, void *rb, F *rn, F *rt, F *c, F *ierr)) {         \
    *ierr = MPI_##NAME(fbuf(sb), *sn, TYPE(st), fbuf(rb), *rn, TYPE(rt), COMM(c));         \
  }
FALL(mpi_allgather, MPI_ALLGATHER, Allgather)
FALL(mpi_alltoall, MPI_ALLTOALL, Alltoall)

FORT(mpi_gatherv, MPI_GATHERV, (void *sb, F *sn, F *st, void *rb, F *rcounts, F *displs,
                                F *rt, F *root, F *c, F *ierr)) {
  *ierr = MPI_Gatherv(fbuf(sb), *sn, TYPE(st), fbuf(rb), rcounts, displs, TYPE(rt), *root,
                      COMM(c));
}

FORT(mpi_scatterv, MPI_SCATTERV, (void *sb, F *scounts, F *displs, F *st, void *rb, F *rn,
                                  F *rt, F *root, F *c, F *ierr)) {
  *ierr = MPI_Scatterv(fbuf(sb), scounts, displs, TYPE(st), fbuf(rb), *rn, TYPE(rt), *root,
                       COMM(c));
}

FORT(mpi_allgatherv, MPI_ALLGATHERV, (void *sb, F *sn, F *st, void *rb, F *rcounts,
                                      F *displs, F *rt, F *c, F *ierr)) {
  *ierr = MPI_Allgatherv(fbuf(sb), *sn, TYPE(st), fbuf(rb), rcounts, displs, TYPE(rt),
                         COMM(c));
}

FORT(mpi_alltoallv, MPI_ALLTOALLV, (void *sb, F *scounts, F *sd, F *st, void *rb,
                                    F *rcounts, F *rd, F *rt, F *c, F *ierr)) {
  *ierr = MPI_Alltoallv(fbuf(sb), scounts, sd, TYPE(st), fbuf(rb), rcounts, rd, TYPE(rt),
                        COMM(c));
}

FORT(mpi_comm_dup, MPI_COMM_DUP, (F *c, F *made, F *ierr)) {
  MPI_Comm m;
  *ierr = MPI_Comm_dup(COMM(c), &m);
  *made = MPI_Comm_c2f(m);
}

FORT(mpi_comm_split, MPI_COMM_SPLIT, (F *c, F *colour, F *key, F *made, F *ierr)) {
  MPI_Comm m;
  *ierr = MPI_Comm_split(COMM(c), *colour, *key, &m);
  *made = MPI_Comm_c2f(m);
}

FORT(mpi_comm_create, MPI_COMM_CREATE, (F *c, F *g, F *made, F *ierr)) {
  MPI_Comm m;
  *ierr = MPI_Comm_create(COMM(c), MPI_Group_f2c(*g), &m);
  *made = MPI_Comm_c2f(m);
}

FORT(mpi_comm_free, MPI_COMM_FREE, (F *c, F *ierr)) {
  MPI_Comm m = COMM(c);
  *ierr = MPI_Comm_free(&m);
  *c = MPI_Comm_c2f(m);
}

FORT(mpi_cart_create, MPI_CART_CREATE, (F *c, F *ndims, F *dims, F *periods, F *reorder,
                                        F *made, F *ierr)) {
  int k = *ndims, *p = malloc(sizeof *p * (k > 0 ? k : 1));
  for (int i = 0; i < k; i++) p[i] = periods[i] != 0;
  MPI_Comm m;
  *ierr = MPI_Cart_create(COMM(c), k, dims, p, *reorder != 0, &m);
  *made = MPI_Comm_c2f(m);
  free(p);
}

FORT(mpi_cart_sub, MPI_CART_SUB, (F *c, F *remain, F *made, F *ierr)) {
  int k = 0, *p;
  MPI_Cartdim_get(COMM(c), &k);
  p = malloc(sizeof *p * (k > 0 ? k : 1));
  for (int i = 0; i < k; i++) p[i] = remain[i] != 0;
  MPI_Comm m;
  *ierr = MPI_Cart_sub(COMM(c), p, &m);
  *made = MPI_Comm_c2f(m);
  free(p);
}

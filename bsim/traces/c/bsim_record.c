/* bsim's PMPI interposition library: records every rank's MPI calls.
 *
 * Built by bsim.traces.build with the MPI's own compiler wrapper (mpicc -shared -fPIC) and
 * loaded with LD_PRELOAD, so an unmodified binary of that MPI is traced.  Each MPI function
 * below calls its PMPI_ twin and appends one fixed-size record (struct rec, 64 bytes) to
 * $BSIM_TRACE_DIR/rank-<world rank>.bin: the operation, the communicator (a small id, 0 is
 * MPI_COMM_WORLD), the peer (a rank of that communicator; MPI_PROC_NULL -1 and
 * MPI_ANY_SOURCE -2, bsim's values, whatever the MPI's), tag, bytes (count x
 * MPI_Type_size), root, the request handle, and the call's enter and leave times (see
 * now() below; one clock for all ranks of a node).  A wait or test call is
 * followed by one OP_DONE record per request it completed (handle, source, tag, bytes
 * from its status); a test that completed nothing writes no record (a polling loop's time
 * stays compute, and its file stays small).  A communicator's creation records the new id, the world rank of its
 * rank 0 (the colour of an equivalent MPI_Comm_split) and the caller's rank in it (the key).
 * bsim.traces.rawlog reads the files; bsim.traces.otf2io turns them into OTF2. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
  OP_INIT = 1, OP_FINALIZE, OP_SEND, OP_SSEND, OP_RSEND, OP_BSEND, OP_RECV, OP_ISEND,
  OP_ISSEND, OP_IRECV, OP_WAIT, OP_WAITALL, OP_WAITANY, OP_WAITSOME, OP_TEST, OP_TESTALL,
  OP_TESTANY, OP_TESTSOME, OP_SENDRECV, OP_SENDRECV_REPLACE, OP_BARRIER, OP_BCAST,
  OP_REDUCE, OP_ALLREDUCE, OP_GATHER, OP_GATHERV, OP_SCATTER, OP_SCATTERV, OP_ALLGATHER,
  OP_ALLGATHERV, OP_ALLTOALL, OP_ALLTOALLV, OP_REDUCE_SCATTER, OP_REDUCE_SCATTER_BLOCK,
  OP_SCAN, OP_EXSCAN, OP_COMM_DUP, OP_COMM_SPLIT, OP_COMM_CREATE, OP_CART_CREATE,
  OP_CART_SUB, OP_DONE, OP_IBSEND, OP_IRSEND, OP_COMM_SPLIT_TYPE, OP_CLOCK, OP_CPU
};

struct rec {              /* 64 bytes, little-endian on the machines bsim runs on */
  double t0, t1;          /* enter, leave */
  int32_t op, comm, peer, tag;
  int64_t bytes, bytes2;  /* sent, received (collectives: per-rank amounts) */
  int64_t req;            /* request handle; waitall/testall: count; comm creation: new id */
  int32_t root, extra;    /* root; the recv peer of sendrecv; comm creation: key */
};

static FILE *out;
static int world_rank = -1;
#define MAXCOMM 4096
static MPI_Comm comms[MAXCOMM];
static int ncomms;

static double wall(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The time stamp of a record.  On x86-64 the time-stamp counter (tens of nanoseconds;
 * clock_gettime can cost a system call, 0.6 us on a virtual machine), converted to seconds
 * by bsim.traces.rawlog from two OP_CLOCK records (counter, CLOCK_MONOTONIC) written at
 * MPI_Init and MPI_Finalize; elsewhere CLOCK_MONOTONIC itself. */
#if defined(__x86_64__)
#include <x86intrin.h>
#define CLOCK_KIND 1
static double now(void) { return (double)__rdtsc(); }
#else
#define CLOCK_KIND 0
static double now(void) { return wall(); }
#endif

/* With BSIM_RECORD_CPU=1 (bsim record --compute-clock cpu), each call's record is
 * followed by an OP_CPU record holding the thread's CPU seconds at the call's enter and
 * leave (CLOCK_THREAD_CPUTIME_ID), so that compute can be the CPU time between calls:
 * what the code needs of a core, without the time the rank waited for one. */
static int cpu_on = -1;
static double cpu_enter;
static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static double enter(void) {
  if (cpu_on < 0) { const char *e = getenv("BSIM_RECORD_CPU"); cpu_on = e && *e == '1'; }
  if (cpu_on) cpu_enter = cpu_now();
  return now();
}

static int comm_id(MPI_Comm c) {   /* -1: a communicator made by a call not wrapped here */
  if (c == MPI_COMM_NULL) return -1;
  for (int i = 0; i < ncomms; i++) if (comms[i] == c) return i;
  return -1;
}

/* A peer as the trace holds it: MPI_PROC_NULL is -1 whatever the MPI's value (Open MPI's
 * is -2, its MPI_ANY_SOURCE -1), as in bsim. */
static int peer_of(int p) { return p == MPI_PROC_NULL ? -1 : p; }

static int64_t nbytes(int count, MPI_Datatype t) {
  int s = 0;
  if (t == MPI_DATATYPE_NULL || count <= 0) return 0;
  PMPI_Type_size(t, &s);
  return (int64_t)count * s;
}

static void emit(double t0, int op, MPI_Comm c, int peer, int tag, int64_t b, int64_t b2,
                 int64_t req, int root, int extra) {
  if (!out) return;
  struct rec r = {t0, now(), op, comm_id(c), peer, tag, b, b2, req, root, extra};
  fwrite(&r, sizeof r, 1, out);
  if (cpu_on > 0 && op != OP_DONE) {
    struct rec q = {cpu_enter, cpu_now(), OP_CPU, 0, -1, 0, 0, 0, 0, 0, 0};
    fwrite(&q, sizeof q, 1, out);
  }
}

static void clock_pair(void);

static void open_log(void) {
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  int size;
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  comms[0] = MPI_COMM_WORLD; comms[1] = MPI_COMM_SELF; ncomms = 2;
  const char *dir = getenv("BSIM_TRACE_DIR");
  if (!dir) return;
  char path[4096];
  snprintf(path, sizeof path, "%s/rank-%d.bin", dir, world_rank);
  out = fopen(path, "wb");
  if (!out) { fprintf(stderr, "bsim record: cannot write %s\n", path); return; }
  setvbuf(out, NULL, _IOFBF, 1 << 20);
  int32_t head[4] = {0x4d495342 /* "BSIM" */, 2 /* version */, world_rank, size};
  fwrite(head, sizeof head, 1, out);
  clock_pair();
}

/* one (counter, seconds) pair: the clock's calibration point; bytes: the process's CPU
 * time in ns (the part of the wall time it had a core) */
static void clock_pair(void) {
  if (!out) return;
  struct timespec cpu;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
  int64_t ns = (int64_t)cpu.tv_sec * 1000000000 + cpu.tv_nsec;
  struct rec r = {now(), wall(), OP_CLOCK, 0, -1, 0, ns, 0, CLOCK_KIND, 0, 0};
  fwrite(&r, sizeof r, 1, out);
}

static void new_comm(double t0, int op, MPI_Comm parent, MPI_Comm *made) {
  int id = -1, colour = -1, key = -1;
  if (*made != MPI_COMM_NULL && ncomms < MAXCOMM) {
    for (int i = 2; i < ncomms; i++)   /* a freed communicator's handle, given again */
      if (comms[i] == *made) comms[i] = MPI_COMM_NULL;
    id = ncomms; comms[ncomms++] = *made;
    MPI_Group g, wg;
    int zero = 0;
    PMPI_Comm_rank(*made, &key);
    PMPI_Comm_group(*made, &g);
    PMPI_Comm_group(MPI_COMM_WORLD, &wg);
    PMPI_Group_translate_ranks(g, 1, &zero, wg, &colour);
    PMPI_Group_free(&g); PMPI_Group_free(&wg);
  }
  emit(t0, op, parent, colour, 0, 0, 0, id, 0, key);
}

/* the completed requests of a wait or test: one OP_DONE record each */
static void done(const MPI_Request *before, int i, const MPI_Status *st, int ignore) {
  int src = -1, tag = -1, count = 0;
  if (!ignore && st && st->MPI_SOURCE >= 0) {
    src = st->MPI_SOURCE; tag = st->MPI_TAG;
    PMPI_Get_count(st, MPI_BYTE, &count);
    if (count == MPI_UNDEFINED) count = 0;
  }
  emit(now(), OP_DONE, MPI_COMM_WORLD, src, tag, count, 0, (int64_t)(intptr_t)before[i], 0, i);
}

int MPI_Init(int *argc, char ***argv) {
  double t0 = enter();
  int rc = PMPI_Init(argc, argv);
  open_log();
  emit(t0, OP_INIT, MPI_COMM_WORLD, -1, 0, 0, 0, 0, 0, 0);
  return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  double t0 = enter();
  int rc = PMPI_Init_thread(argc, argv, required, provided);
  open_log();
  emit(t0, OP_INIT, MPI_COMM_WORLD, -1, 0, 0, 0, 0, 0, 0);
  return rc;
}

int MPI_Finalize(void) {
  emit(enter(), OP_FINALIZE, MPI_COMM_WORLD, -1, 0, 0, 0, 0, 0, 0);
  clock_pair();
  if (out) { fclose(out); out = NULL; }
  return PMPI_Finalize();
}

#define P2P(NAME, OP)                                                                       \
  int MPI_##NAME(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm c) { \
    double t0 = enter();                                                                      \
    int rc = PMPI_##NAME(buf, count, t, dest, tag, c);                                      \
    emit(t0, OP, c, peer_of(dest), tag, nbytes(count, t), 0, 0, 0, 0);                      \
    return rc;                                                                              \
  }
P2P(Send, OP_SEND)
P2P(Ssend, OP_SSEND)
P2P(Rsend, OP_RSEND)
P2P(Bsend, OP_BSEND)

#define IP2P(NAME, OP)                                                                      \
  int MPI_##NAME(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm c,  \
                 MPI_Request *r) {                                                          \
    double t0 = enter();                                                                      \
    int rc = PMPI_##NAME(buf, count, t, dest, tag, c, r);                                   \
    emit(t0, OP, c, peer_of(dest), tag, nbytes(count, t), 0, (int64_t)(intptr_t)*r, 0, 0);  \
    return rc;                                                                              \
  }
IP2P(Isend, OP_ISEND)
IP2P(Issend, OP_ISSEND)
IP2P(Ibsend, OP_IBSEND)
IP2P(Irsend, OP_IRSEND)

int MPI_Recv(void *buf, int count, MPI_Datatype t, int src, int tag, MPI_Comm c,
             MPI_Status *st) {
  MPI_Status mine;
  MPI_Status *s = st == MPI_STATUS_IGNORE ? &mine : st;
  double t0 = enter();
  int rc = PMPI_Recv(buf, count, t, src, tag, c, s);
  int n = 0;
  PMPI_Get_count(s, MPI_BYTE, &n);
  emit(t0, OP_RECV, c, peer_of(s->MPI_SOURCE), s->MPI_TAG, n == MPI_UNDEFINED ? 0 : n, 0, 0,
       0, 0);
  return rc;
}

int MPI_Irecv(void *buf, int count, MPI_Datatype t, int src, int tag, MPI_Comm c,
              MPI_Request *r) {
  double t0 = enter();
  int rc = PMPI_Irecv(buf, count, t, src, tag, c, r);
  emit(t0, OP_IRECV, c, src == MPI_ANY_SOURCE ? -2 : peer_of(src), tag, nbytes(count, t), 0,
       (int64_t)(intptr_t)*r, 0, 0);
  return rc;
}

int MPI_Sendrecv(const void *sb, int sc, MPI_Datatype st_, int dest, int stag, void *rb,
                 int rcount, MPI_Datatype rt, int src, int rtag, MPI_Comm c, MPI_Status *st) {
  MPI_Status mine;
  MPI_Status *s = st == MPI_STATUS_IGNORE ? &mine : st;
  double t0 = enter();
  int rc = PMPI_Sendrecv(sb, sc, st_, dest, stag, rb, rcount, rt, src, rtag, c, s);
  int n = 0;
  PMPI_Get_count(s, MPI_BYTE, &n);
  emit(t0, OP_SENDRECV, c, peer_of(dest), stag, nbytes(sc, st_), n == MPI_UNDEFINED ? 0 : n,
       s->MPI_TAG, 0, peer_of(s->MPI_SOURCE));
  return rc;
}

int MPI_Sendrecv_replace(void *b, int count, MPI_Datatype t, int dest, int stag, int src,
                         int rtag, MPI_Comm c, MPI_Status *st) {
  MPI_Status mine;
  MPI_Status *s = st == MPI_STATUS_IGNORE ? &mine : st;
  double t0 = enter();
  int rc = PMPI_Sendrecv_replace(b, count, t, dest, stag, src, rtag, c, s);
  emit(t0, OP_SENDRECV_REPLACE, c, peer_of(dest), stag, nbytes(count, t), nbytes(count, t),
       s->MPI_TAG, 0, peer_of(s->MPI_SOURCE));
  return rc;
}

int MPI_Wait(MPI_Request *r, MPI_Status *st) {
  MPI_Status mine;
  MPI_Status *s = st == MPI_STATUS_IGNORE ? &mine : st;
  MPI_Request before = *r;
  double t0 = enter();
  int rc = PMPI_Wait(r, s);
  emit(t0, OP_WAIT, MPI_COMM_WORLD, -1, 0, 0, 0, 1, 0, 0);
  if (before != MPI_REQUEST_NULL) done(&before, 0, s, 0);
  return rc;
}

int MPI_Test(MPI_Request *r, int *flag, MPI_Status *st) {
  MPI_Status mine;
  MPI_Status *s = st == MPI_STATUS_IGNORE ? &mine : st;
  MPI_Request before = *r;
  double t0 = enter();
  int rc = PMPI_Test(r, flag, s);
  if (!*flag) return rc;   /* a poll that completed nothing: its time stays compute */
  emit(t0, OP_TEST, MPI_COMM_WORLD, -1, 0, 0, 0, 1, 0, *flag);
  if (before != MPI_REQUEST_NULL) done(&before, 0, s, 0);
  return rc;
}

static MPI_Request *copy_reqs(int n, const MPI_Request *r) {
  MPI_Request *c = malloc(sizeof *c * (n > 0 ? n : 1));
  memcpy(c, r, sizeof *c * n);
  return c;
}

int MPI_Waitall(int n, MPI_Request r[], MPI_Status st[]) {
  MPI_Request *before = copy_reqs(n, r);
  MPI_Status *s = st == MPI_STATUSES_IGNORE ? malloc(sizeof *s * (n > 0 ? n : 1)) : st;
  double t0 = enter();
  int rc = PMPI_Waitall(n, r, s);
  emit(t0, OP_WAITALL, MPI_COMM_WORLD, -1, 0, 0, 0, n, 0, 0);
  for (int i = 0; i < n; i++) if (before[i] != MPI_REQUEST_NULL) done(before, i, &s[i], 0);
  if (s != st) free(s);
  free(before);
  return rc;
}

int MPI_Testall(int n, MPI_Request r[], int *flag, MPI_Status st[]) {
  MPI_Request *before = copy_reqs(n, r);
  MPI_Status *s = st == MPI_STATUSES_IGNORE ? malloc(sizeof *s * (n > 0 ? n : 1)) : st;
  double t0 = enter();
  int rc = PMPI_Testall(n, r, flag, s);
  if (*flag) {
    emit(t0, OP_TESTALL, MPI_COMM_WORLD, -1, 0, 0, 0, n, 0, *flag);
    for (int i = 0; i < n; i++) if (before[i] != MPI_REQUEST_NULL) done(before, i, &s[i], 0);
  }
  if (s != st) free(s);
  free(before);
  return rc;
}

int MPI_Waitany(int n, MPI_Request r[], int *index, MPI_Status *st) {
  MPI_Request *before = copy_reqs(n, r);
  MPI_Status mine;
  MPI_Status *s = st == MPI_STATUS_IGNORE ? &mine : st;
  double t0 = enter();
  int rc = PMPI_Waitany(n, r, index, s);
  emit(t0, OP_WAITANY, MPI_COMM_WORLD, -1, 0, 0, 0, n, 0, *index);
  if (*index != MPI_UNDEFINED) done(before, *index, s, 0);
  free(before);
  return rc;
}

int MPI_Testany(int n, MPI_Request r[], int *index, int *flag, MPI_Status *st) {
  MPI_Request *before = copy_reqs(n, r);
  MPI_Status mine;
  MPI_Status *s = st == MPI_STATUS_IGNORE ? &mine : st;
  double t0 = enter();
  int rc = PMPI_Testany(n, r, index, flag, s);
  if (*flag && *index != MPI_UNDEFINED) {
    emit(t0, OP_TESTANY, MPI_COMM_WORLD, -1, 0, 0, 0, n, 0, *flag);
    done(before, *index, s, 0);
  }
  free(before);
  return rc;
}

static int some(int op, int n, MPI_Request r[], int *outcount, int idx[], MPI_Status st[],
                int test) {
  MPI_Request *before = copy_reqs(n, r);
  MPI_Status *s = st == MPI_STATUSES_IGNORE ? malloc(sizeof *s * (n > 0 ? n : 1)) : st;
  double t0 = enter();
  int rc = test ? PMPI_Testsome(n, r, outcount, idx, s) : PMPI_Waitsome(n, r, outcount, idx, s);
  if (*outcount != MPI_UNDEFINED && *outcount > 0) {
    emit(t0, op, MPI_COMM_WORLD, -1, 0, 0, 0, n, 0, *outcount);
    for (int k = 0; k < *outcount; k++) done(before, idx[k], &s[k], 0);
  }
  if (s != st) free(s);
  free(before);
  return rc;
}

int MPI_Waitsome(int n, MPI_Request r[], int *oc, int idx[], MPI_Status st[]) {
  return some(OP_WAITSOME, n, r, oc, idx, st, 0);
}

int MPI_Testsome(int n, MPI_Request r[], int *oc, int idx[], MPI_Status st[]) {
  return some(OP_TESTSOME, n, r, oc, idx, st, 1);
}

static int rank_of(MPI_Comm c) { int r; PMPI_Comm_rank(c, &r); return r; }
static int size_of(MPI_Comm c) { int s; PMPI_Comm_size(c, &s); return s; }
static int64_t sum_counts(const int *counts, MPI_Datatype t, int n) {
  int64_t b = 0;
  for (int i = 0; i < n; i++) b += nbytes(counts[i], t);
  return b;
}

int MPI_Barrier(MPI_Comm c) {
  double t0 = enter();
  int rc = PMPI_Barrier(c);
  emit(t0, OP_BARRIER, c, -1, 0, 0, 0, 0, 0, 0);
  return rc;
}

int MPI_Bcast(void *b, int count, MPI_Datatype t, int root, MPI_Comm c) {
  double t0 = enter();
  int rc = PMPI_Bcast(b, count, t, root, c);
  emit(t0, OP_BCAST, c, -1, 0, nbytes(count, t), nbytes(count, t), 0, root, 0);
  return rc;
}

int MPI_Reduce(const void *sb, void *rb, int count, MPI_Datatype t, MPI_Op op, int root,
               MPI_Comm c) {
  double t0 = enter();
  int rc = PMPI_Reduce(sb, rb, count, t, op, root, c);
  emit(t0, OP_REDUCE, c, -1, 0, nbytes(count, t), nbytes(count, t), 0, root, 0);
  return rc;
}

#define REDUCE_ALL(NAME, OP)                                                                \
  int MPI_##NAME(const void *sb, void *rb, int count, MPI_Datatype t, MPI_Op op,             \
                 MPI_Comm c) {                                                              \
    double t0 = enter();                                                                      \
    int rc = PMPI_##NAME(sb, rb, count, t, op, c);                                          \
    emit(t0, OP, c, -1, 0, nbytes(count, t), nbytes(count, t), 0, 0, 0);                    \
    return rc;                                                                              \
  }
REDUCE_ALL(Allreduce, OP_ALLREDUCE)
REDUCE_ALL(Scan, OP_SCAN)
REDUCE_ALL(Exscan, OP_EXSCAN)

int MPI_Reduce_scatter_block(const void *sb, void *rb, int count, MPI_Datatype t, MPI_Op op,
                             MPI_Comm c) {
  double t0 = enter();
  int rc = PMPI_Reduce_scatter_block(sb, rb, count, t, op, c);
  emit(t0, OP_REDUCE_SCATTER_BLOCK, c, -1, 0, nbytes(count, t) * size_of(c), nbytes(count, t),
       0, 0, 0);
  return rc;
}

int MPI_Reduce_scatter(const void *sb, void *rb, const int counts[], MPI_Datatype t,
                       MPI_Op op, MPI_Comm c) {
  double t0 = enter();
  int rc = PMPI_Reduce_scatter(sb, rb, counts, t, op, c);
  emit(t0, OP_REDUCE_SCATTER, c, -1, 0, sum_counts(counts, t, size_of(c)),
       nbytes(counts[rank_of(c)], t), 0, 0, 0);
  return rc;
}

/* gather, scatter, allgather, alltoall: bytes = what this rank sends to one rank
 * (per-peer amount), bytes2 = what it receives from one rank */
#define ROOTED(NAME, OP)                                                                    \
  int MPI_##NAME(const void *sb, int sc, MPI_Datatype st, void *rb, int rcount,             \
                 MPI_Datatype rt, int root, MPI_Comm c) {                                   \
    double t0 = enter();                                                                      \
    int rc = PMPI_##NAME(sb, sc, st, rb, rcount, rt, root, c);                              \
    int me = rank_of(c);                                                                    \
    emit(t0, OP, c, -1, 0, (OP == OP_GATHER || me == root) ? nbytes(sc, st) : 0,            \
         (OP == OP_SCATTER || me == root) ? nbytes(rcount, rt) : 0, 0, root, 0);            \
    return rc;                                                                              \
  }
ROOTED(Gather, OP_GATHER)
ROOTED(Scatter, OP_SCATTER)

#define ALL(NAME, OP)                                                                       \
  int MPI_##NAME(const void *sb, int sc, MPI_Datatype st, void *rb, int rcount,             \
                 MPI_Datatype rt, MPI_Comm c) {                                             \
    double t0 = enter();                                                                      \
    int rc = PMPI_##NAME(sb, sc, st, rb, rcount, rt, c);                                    \
    int64_t s = sb == MPI_IN_PLACE ? nbytes(rcount, rt) : nbytes(sc, st);                   \
    emit(t0, OP, c, -1, 0, s, nbytes(rcount, rt), 0, 0, 0);                                 \
    return rc;                                                                              \
  }
ALL(Allgather, OP_ALLGATHER)
ALL(Alltoall, OP_ALLTOALL)

/* the v forms: bytes = total sent by this rank, bytes2 = total received */
int MPI_Gatherv(const void *sb, int sc, MPI_Datatype st, void *rb, const int rcounts[],
                const int displs[], MPI_Datatype rt, int root, MPI_Comm c) {
  double t0 = enter();
  int rc = PMPI_Gatherv(sb, sc, st, rb, rcounts, displs, rt, root, c);
  int me = rank_of(c);
  emit(t0, OP_GATHERV, c, -1, 0, nbytes(sc, st),
       me == root ? sum_counts(rcounts, rt, size_of(c)) : 0, 0, root, 0);
  return rc;
}

int MPI_Scatterv(const void *sb, const int scounts[], const int displs[], MPI_Datatype st,
                 void *rb, int rcount, MPI_Datatype rt, int root, MPI_Comm c) {
  double t0 = enter();
  int rc = PMPI_Scatterv(sb, scounts, displs, st, rb, rcount, rt, root, c);
  int me = rank_of(c);
  emit(t0, OP_SCATTERV, c, -1, 0, me == root ? sum_counts(scounts, st, size_of(c)) : 0,
       nbytes(rcount, rt), 0, root, 0);
  return rc;
}

int MPI_Allgatherv(const void *sb, int sc, MPI_Datatype st, void *rb, const int rcounts[],
                   const int displs[], MPI_Datatype rt, MPI_Comm c) {
  double t0 = enter();
  int rc = PMPI_Allgatherv(sb, sc, st, rb, rcounts, displs, rt, c);
  int64_t s = sb == MPI_IN_PLACE ? nbytes(rcounts[rank_of(c)], rt) : nbytes(sc, st);
  emit(t0, OP_ALLGATHERV, c, -1, 0, s, sum_counts(rcounts, rt, size_of(c)), 0, 0, 0);
  return rc;
}

int MPI_Alltoallv(const void *sb, const int scounts[], const int sd[], MPI_Datatype st,
                  void *rb, const int rcounts[], const int rd[], MPI_Datatype rt, MPI_Comm c) {
  double t0 = enter();
  int rc = PMPI_Alltoallv(sb, scounts, sd, st, rb, rcounts, rd, rt, c);
  int n = size_of(c);
  emit(t0, OP_ALLTOALLV, c, -1, 0, sum_counts(scounts, st, n), sum_counts(rcounts, rt, n), 0,
       0, 0);
  return rc;
}

int MPI_Comm_free(MPI_Comm *c) {
  int id = comm_id(*c);
  if (id > 1) comms[id] = MPI_COMM_NULL;   /* its handle may come back for another */
  return PMPI_Comm_free(c);
}

int MPI_Comm_dup(MPI_Comm c, MPI_Comm *made) {
  double t0 = enter();
  int rc = PMPI_Comm_dup(c, made);
  new_comm(t0, OP_COMM_DUP, c, made);
  return rc;
}

int MPI_Comm_split(MPI_Comm c, int colour, int key, MPI_Comm *made) {
  double t0 = enter();
  int rc = PMPI_Comm_split(c, colour, key, made);
  new_comm(t0, OP_COMM_SPLIT, c, made);
  return rc;
}

int MPI_Comm_split_type(MPI_Comm c, int type, int key, MPI_Info info, MPI_Comm *made) {
  double t0 = enter();
  int rc = PMPI_Comm_split_type(c, type, key, info, made);
  new_comm(t0, OP_COMM_SPLIT_TYPE, c, made);
  return rc;
}

int MPI_Comm_create(MPI_Comm c, MPI_Group g, MPI_Comm *made) {
  double t0 = enter();
  int rc = PMPI_Comm_create(c, g, made);
  new_comm(t0, OP_COMM_CREATE, c, made);
  return rc;
}

int MPI_Cart_create(MPI_Comm c, int ndims, const int dims[], const int periods[], int reorder,
                    MPI_Comm *made) {
  double t0 = enter();
  int rc = PMPI_Cart_create(c, ndims, dims, periods, reorder, made);
  new_comm(t0, OP_CART_CREATE, c, made);
  return rc;
}

int MPI_Cart_sub(MPI_Comm c, const int remain[], MPI_Comm *made) {
  double t0 = enter();
  int rc = PMPI_Cart_sub(c, remain, made);
  new_comm(t0, OP_CART_SUB, c, made);
  return rc;
}

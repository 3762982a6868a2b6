! A tiny Fortran MPI application (tests/test_traces_fortran.py): per iteration, a ring
! exchange (MPI_Sendrecv), a nonblocking exchange with both ring neighbours (MPI_Irecv,
! MPI_Isend, MPI_Waitall), an MPI_Allreduce in place, an MPI_Bcast from rank 0, and an
! MPI_Allreduce on an even/odd sub-communicator (MPI_Comm_split); then a Send/Recv pair
! between ranks 0 and 1 with a status, a Send and a Recv with MPI_PROC_NULL, and an
! MPI_Barrier.
! argv: iterations bytes
program traces_app_f
  use mpi
  implicit none
  integer :: ierr, rank, size, iters, n, i, right, left, half, req(4)
  integer :: st(MPI_STATUS_SIZE), count
  character(len=32) :: arg
  character, allocatable :: sb(:), rb(:), rb2(:)
  double precision :: x, y

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  iters = 5
  n = 1024
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) iters
  end if
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) n
  end if
  allocate (sb(n), rb(n), rb2(n))
  sb = 'x'
  right = mod(rank + 1, size)
  left = mod(rank - 1 + size, size)
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, half, ierr)
  x = rank
  do i = 1, iters
    call MPI_Sendrecv(sb, n, MPI_BYTE, right, 1, rb, n, MPI_BYTE, left, 1, &
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call MPI_Irecv(rb, n, MPI_BYTE, left, 2, MPI_COMM_WORLD, req(1), ierr)
    call MPI_Irecv(rb2, n, MPI_BYTE, right, 3, MPI_COMM_WORLD, req(2), ierr)
    call MPI_Isend(sb, n, MPI_BYTE, right, 2, MPI_COMM_WORLD, req(3), ierr)
    call MPI_Isend(sb, n, MPI_BYTE, left, 3, MPI_COMM_WORLD, req(4), ierr)
    call MPI_Waitall(4, req, MPI_STATUSES_IGNORE, ierr)
    y = 1.0d0
    call MPI_Allreduce(MPI_IN_PLACE, y, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (nint(y) /= size) error stop "in-place allreduce"
    call MPI_Bcast(sb, n, MPI_BYTE, 0, MPI_COMM_WORLD, ierr)
    call MPI_Allreduce(x, y, 1, MPI_DOUBLE_PRECISION, MPI_MAX, half, ierr)
  end do
  if (rank == 0) call MPI_Send(sb, 100, MPI_BYTE, 1, 7, MPI_COMM_WORLD, ierr)
  if (rank == 1) then
    call MPI_Recv(rb, n, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, st, ierr)
    call MPI_Get_count(st, MPI_BYTE, count, ierr)
    if (st(MPI_SOURCE) /= 0 .or. st(MPI_TAG) /= 7 .or. count /= 100) error stop "status"
  end if
  ! a boundary's exchange with no neighbour: MPI_PROC_NULL (Open MPI's is -2)
  call MPI_Send(sb, 10, MPI_BYTE, MPI_PROC_NULL, 9, MPI_COMM_WORLD, ierr)
  call MPI_Recv(rb, 10, MPI_BYTE, MPI_PROC_NULL, 9, MPI_COMM_WORLD, st, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Comm_free(half, ierr)
  if (rank == 0) print '(a, i0, a)', 'traces_app_f ', size, ' ranks'
  call MPI_Finalize(ierr)
end program traces_app_f

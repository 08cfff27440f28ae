! Fortran callers through gddt, two ranks: derived datatypes sent and received (blocking,
! nonblocking, MPI_WAITALL and MPI_WAITANY, MPI_BOTTOM with absolute addresses), packed and
! unpacked and compared byte for byte with the library's own PMPI_PACK/PMPI_UNPACK, a bad handle
! answered with an MPI error, an MPI_ALLTOALLW of the derived type against the library's own, and
! gddt's counters showing that gddt did the work. Compiled twice: with mpif.h (GDDT_MPIF_H) and
! with `use mpi`. Argument: the memory kind of the buffers (host, pinned, device, managed). Run
! with GDDT_P2P_HOST=gddt GDDT_PACK_HOST=gddt GDDT_COLLECTIVE_HOST=gddt on host memory.
program fortran_p2p
#ifndef GDDT_MPIF_H
  use mpi
#endif
  use, intrinsic :: iso_c_binding
  use gddt_test_support
  implicit none
#ifdef GDDT_MPIF_H
  include 'mpif.h'
#endif
  integer, parameter :: n = 16, half = n / 2
  integer :: rank, ranks, peer, ierr, vector, absolute, i, count, index, position, error_class
  integer :: status(MPI_STATUS_SIZE), statuses(MPI_STATUS_SIZE, 2), requests(2), lengths(1)
  integer(kind=MPI_ADDRESS_KIND) :: displacements(1)
  real(c_double), target :: mine(n), theirs(n), got(n), poison(n)
  real(c_double), pointer :: send(:), recv(:)
  type(c_ptr) :: send_buffer, recv_buffer
  integer :: here, everywhere
  character(len=16) :: memory
  character(len=1) :: by_gddt(8 * n), by_library(8 * n)
  integer :: gddt_position, library_position
  integer(c_long_long) :: sides, packs, stand_ins
  integer :: wcounts(2), wdispls(2), wtypes(2)

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, ranks, ierr)
  memory = 'host'
  if (command_argument_count() >= 1) call get_command_argument(1, memory)
  ! Every rank skips together: one leaving alone would keep the other waiting for it.
  here = merge(1, 0, usable(memory, rank))
  call MPI_ALLREDUCE(here, everywhere, 1, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD, ierr)
  if (ranks /= 2 .or. everywhere == 0) then
    if (rank == 0) write (*, '(3a)') 'fortran_p2p: skipped: needs 2 ranks and ', trim(memory), ' memory'
    call MPI_FINALIZE(ierr)
    stop
  end if
  peer = 1 - rank
  sides = staged_sides()
  packs = counter('pack.calls')

  mine = [(100 * rank + i, i = 1, n)]
  theirs = [(100 * peer + i, i = 1, n)]
  poison = -1
  call MPI_TYPE_VECTOR(half, 1, 2, MPI_DOUBLE_PRECISION, vector, ierr)
  call MPI_TYPE_COMMIT(vector, ierr)
  send_buffer = buffer_of(memory, mine)
  recv_buffer = buffer_of(memory, poison)
  send => address_of(send_buffer, n)
  recv => address_of(recv_buffer, n)

  ! Blocking, rank 0 to rank 1.
  if (rank == 0) then
    call MPI_SEND(send, 1, vector, 1, 7, MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_SEND', rank)
  else
    call MPI_RECV(recv, 1, vector, 0, 7, MPI_COMM_WORLD, status, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_RECV', rank)
    call MPI_GET_COUNT(status, vector, count, ierr)
    call check(count == 1 .and. status(MPI_SOURCE) == 0 .and. status(MPI_TAG) == 7, 'MPI_RECV status', rank)
    call expect_elements(recv_buffer, every_other(theirs, poison), 'MPI_SEND to MPI_RECV', rank)
  end if

  ! Both ways at once, completed by MPI_WAITALL, then by MPI_WAITANY and MPI_WAIT.
  recv => renewed(recv_buffer, memory, poison)
  call MPI_IRECV(recv, 1, vector, peer, 8, MPI_COMM_WORLD, requests(1), ierr)
  call MPI_ISEND(send, 1, vector, peer, 8, MPI_COMM_WORLD, requests(2), ierr)
  call MPI_WAITALL(2, requests, statuses, ierr)
  call check(ierr == MPI_SUCCESS .and. all(requests == MPI_REQUEST_NULL), 'MPI_WAITALL', rank)
  call check(statuses(MPI_SOURCE, 1) == peer .and. statuses(MPI_TAG, 1) == 8, 'MPI_WAITALL statuses', rank)
  call expect_elements(recv_buffer, every_other(theirs, poison), 'MPI_ISEND to MPI_IRECV, MPI_WAITALL', rank)
  recv => renewed(recv_buffer, memory, poison)
  call MPI_IRECV(recv, 1, vector, peer, 9, MPI_COMM_WORLD, requests(1), ierr)
  call MPI_ISEND(send, 1, vector, peer, 9, MPI_COMM_WORLD, requests(2), ierr)
  call MPI_WAITANY(2, requests, index, status, ierr)
  call check(ierr == MPI_SUCCESS .and. (index == 1 .or. index == 2), 'MPI_WAITANY index (from 1)', rank)
  call check(requests(index) == MPI_REQUEST_NULL, 'MPI_WAITANY frees the request it names', rank)
  call MPI_WAIT(requests(3 - index), MPI_STATUS_IGNORE, ierr)
  call expect_elements(recv_buffer, every_other(theirs, poison), 'MPI_WAITANY, MPI_WAIT', rank)

  ! MPI_BOTTOM with the absolute address of the send buffer.
  recv => renewed(recv_buffer, memory, poison)
  call MPI_GET_ADDRESS(send, displacements(1), ierr)
  lengths(1) = 1
  call MPI_TYPE_CREATE_HINDEXED(1, lengths, displacements, vector, absolute, ierr)
  call MPI_TYPE_COMMIT(absolute, ierr)
  call MPI_SENDRECV(MPI_BOTTOM, 1, absolute, peer, 10, recv, 1, vector, peer, 10, MPI_COMM_WORLD, &
                    MPI_STATUS_IGNORE, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_SENDRECV from MPI_BOTTOM', rank)
  call expect_elements(recv_buffer, every_other(theirs, poison), 'MPI_SENDRECV from MPI_BOTTOM', rank)
  call MPI_TYPE_FREE(absolute, ierr)

  ! MPI_PACK and MPI_UNPACK against the library's own, on a host copy of the same elements.
  by_gddt = achar(0)
  by_library = achar(0)
  gddt_position = 0
  library_position = 0
  call MPI_PACK(send, 1, vector, by_gddt, size(by_gddt), gddt_position, MPI_COMM_WORLD, ierr)
  call PMPI_PACK(mine, 1, vector, by_library, size(by_library), library_position, MPI_COMM_WORLD, ierr)
  call check(gddt_position == library_position .and. all(by_gddt == by_library), 'MPI_PACK bytes', rank)
  recv => renewed(recv_buffer, memory, poison)
  got = poison
  position = 0
  call MPI_UNPACK(by_library, size(by_library), position, recv, 1, vector, MPI_COMM_WORLD, ierr)
  library_position = 0
  call PMPI_UNPACK(by_library, size(by_library), library_position, got, 1, vector, MPI_COMM_WORLD, ierr)
  call check(position == library_position, 'MPI_UNPACK position', rank)
  call expect_elements(recv_buffer, got, 'MPI_UNPACK', rank)

  ! A bad handle is an MPI error, not a crash.
  call MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_SEND(send, 1, MPI_DATATYPE_NULL, peer, 11, MPI_COMM_WORLD, ierr)
  call MPI_ERROR_CLASS(ierr, error_class, i)
  call check(error_class == MPI_ERR_TYPE, 'MPI_SEND with MPI_DATATYPE_NULL gives MPI_ERR_TYPE', rank)
  call MPI_SEND(send, 1, 123456, peer, 11, MPI_COMM_WORLD, ierr)
  call MPI_ERROR_CLASS(ierr, error_class, i)
  call check(error_class == MPI_ERR_TYPE, 'MPI_SEND with a handle that names no datatype gives MPI_ERR_TYPE', rank)
  call MPI_WAIT(requests(1), status, ierr)
  call check(ierr == MPI_SUCCESS .and. requests(1) == MPI_REQUEST_NULL, 'MPI_WAIT on MPI_REQUEST_NULL', rank)

  ! MPI_ALLTOALLW: to each rank the vector of every other double, from byte 0 to rank 0 and from
  ! byte 8 to rank 1, received the same way; the library's own PMPI_ALLTOALLW on host copies
  ! gives what each receive buffer must hold.
  stand_ins = counter('collective.stand-ins')
  recv => renewed(recv_buffer, memory, poison)
  wcounts = 1
  wdispls = [0, 8]
  wtypes = vector
  call MPI_ALLTOALLW(send, wcounts, wdispls, wtypes, recv, wcounts, wdispls, wtypes, MPI_COMM_WORLD, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_ALLTOALLW', rank)
  got = poison
  call PMPI_ALLTOALLW(mine, wcounts, wdispls, wtypes, got, wcounts, wdispls, wtypes, MPI_COMM_WORLD, ierr)
  call expect_elements(recv_buffer, got, 'MPI_ALLTOALLW against PMPI_ALLTOALLW', rank)
  call check(counter('collective.stand-ins') > stand_ins, 'gddt staged the MPI_ALLTOALLW buffers', rank)

  ! gddt did the work: counted sides of its messages and packs.
  call check(staged_sides() - sides >= 3, 'gddt staged the derived-type receives', rank)
  call check(counter('pack.calls') - packs >= 1, 'gddt packed', rank)

  call MPI_TYPE_FREE(vector, ierr)
  call release(send_buffer)
  call release(recv_buffer)
  call MPI_ALLREDUCE(MPI_IN_PLACE, failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) write (*, '(a, i0, 2a)') 'fortran p2p: ', failures, ' failed checks, memory ', trim(memory)
  call MPI_FINALIZE(ierr)
  if (failures /= 0) stop 1
end program fortran_p2p

! The same as p2p.F90 through `use mpi_f08`: derived handles, optional ierror, and the library's
! f08 layer (Open MPI's calls ompi_*_f, which gddt defines; MPICH's calls the C functions).
! Packed bytes are checked against the elements themselves (native representation).
program fortran_p2p_f08
  use mpi_f08
  use, intrinsic :: iso_c_binding
  use gddt_test_support
  implicit none
  integer, parameter :: n = 16, half = n / 2
  integer :: rank, ranks, peer, i, count, index, position, error_class, ierr
  type(MPI_Datatype) :: vector, absolute
  type(MPI_Status) :: status, statuses(2)
  type(MPI_Request) :: requests(2)
  integer(kind=MPI_ADDRESS_KIND) :: displacements(1)
  real(c_double), target :: mine(n), theirs(n), poison(n), unpacked(half)
  real(c_double), pointer :: send(:), recv(:)
  type(c_ptr) :: send_buffer, recv_buffer
  character(len=16) :: memory
  integer :: here, everywhere
  character(len=1) :: packed(8 * half)
  integer(c_long_long) :: sides, packs

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, ranks)
  memory = 'host'
  if (command_argument_count() >= 1) call get_command_argument(1, memory)
  ! Every rank skips together: one leaving alone would keep the other waiting for it.
  here = merge(1, 0, usable(memory, rank))
  call MPI_Allreduce(here, everywhere, 1, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD)
  if (ranks /= 2 .or. everywhere == 0) then
    if (rank == 0) write (*, '(3a)') 'fortran_p2p: skipped: needs 2 ranks and ', trim(memory), ' memory'
    call MPI_Finalize()
    stop
  end if
  peer = 1 - rank
  sides = staged_sides()
  packs = counter('pack.calls')
  mine = [(100 * rank + i, i = 1, n)]
  theirs = [(100 * peer + i, i = 1, n)]
  poison = -1
  call MPI_Type_vector(half, 1, 2, MPI_DOUBLE_PRECISION, vector)
  call MPI_Type_commit(vector)
  send_buffer = buffer_of(memory, mine)
  recv_buffer = buffer_of(memory, poison)
  send => address_of(send_buffer, n)
  recv => address_of(recv_buffer, n)

  if (rank == 0) then
    call MPI_Send(send, 1, vector, 1, 7, MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_Send', rank)
  else
    call MPI_Recv(recv, 1, vector, 0, 7, MPI_COMM_WORLD, status)
    call MPI_Get_count(status, vector, count)
    call check(count == 1 .and. status%MPI_SOURCE == 0 .and. status%MPI_TAG == 7, 'MPI_Recv status', rank)
    call expect_elements(recv_buffer, every_other(theirs, poison), 'MPI_Send to MPI_Recv', rank)
  end if

  recv => renewed(recv_buffer, memory, poison)
  call MPI_Irecv(recv, 1, vector, peer, 8, MPI_COMM_WORLD, requests(1))
  call MPI_Isend(send, 1, vector, peer, 8, MPI_COMM_WORLD, requests(2))
  call MPI_Waitall(2, requests, statuses)
  call check(all(requests == MPI_REQUEST_NULL) .and. statuses(1)%MPI_TAG == 8, 'MPI_Waitall', rank)
  call expect_elements(recv_buffer, every_other(theirs, poison), 'MPI_Isend to MPI_Irecv, MPI_Waitall', rank)
  recv => renewed(recv_buffer, memory, poison)
  call MPI_Irecv(recv, 1, vector, peer, 9, MPI_COMM_WORLD, requests(1))
  call MPI_Isend(send, 1, vector, peer, 9, MPI_COMM_WORLD, requests(2))
  call MPI_Waitany(2, requests, index, MPI_STATUS_IGNORE)
  call check(index == 1 .or. index == 2, 'MPI_Waitany index (from 1)', rank)
  call MPI_Wait(requests(3 - index), MPI_STATUS_IGNORE)
  call expect_elements(recv_buffer, every_other(theirs, poison), 'MPI_Waitany, MPI_Wait', rank)

  recv => renewed(recv_buffer, memory, poison)
  call MPI_Get_address(send, displacements(1))
  call MPI_Type_create_hindexed(1, [1], displacements, vector, absolute)
  call MPI_Type_commit(absolute)
  call MPI_Sendrecv(MPI_BOTTOM, 1, absolute, peer, 10, recv, 1, vector, peer, 10, MPI_COMM_WORLD, &
                    MPI_STATUS_IGNORE)
  call expect_elements(recv_buffer, every_other(theirs, poison), 'MPI_Sendrecv from MPI_BOTTOM', rank)
  call MPI_Type_free(absolute)

  position = 0
  call MPI_Pack(send, 1, vector, packed, size(packed), position, MPI_COMM_WORLD)
  unpacked = transfer(packed, unpacked)
  call check(position == size(packed) .and. all(unpacked == mine(1:n:2)), 'MPI_Pack bytes', rank)
  recv => renewed(recv_buffer, memory, poison)
  position = 0
  call MPI_Unpack(packed, size(packed), position, recv, 1, vector, MPI_COMM_WORLD)
  call expect_elements(recv_buffer, every_other(mine, poison), 'MPI_Unpack', rank)

  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
  call MPI_Send(send, 1, MPI_DATATYPE_NULL, peer, 11, MPI_COMM_WORLD, ierr)
  call MPI_Error_class(ierr, error_class)
  call check(error_class == MPI_ERR_TYPE, 'MPI_Send with MPI_DATATYPE_NULL gives MPI_ERR_TYPE', rank)

  call check(staged_sides() - sides >= 3, 'gddt staged the derived-type receives', rank)
  call check(counter('pack.calls') - packs >= 1, 'gddt packed', rank)

  call MPI_Type_free(vector)
  call release(send_buffer)
  call release(recv_buffer)
  call MPI_Allreduce(MPI_IN_PLACE, failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) write (*, '(a, i0, 2a)') 'fortran p2p (mpi_f08): ', failures, ' failed checks, memory ', trim(memory)
  call MPI_Finalize()
  if (failures /= 0) stop 1
end program fortran_p2p_f08

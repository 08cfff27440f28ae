! gddt-bench-fortran-pingpong: what Fortran callers pay for gddt on host memory with a plain type.
! Two ranks exchange 8 bytes (MPI_SEND/MPI_RECV, mpif.h style through `use mpi`) and, in
! alternating rounds of the same run, through the library's own profiling entry points
! (PMPI_SEND/PMPI_RECV, which gddt does not define): the baseline. Prints the median one-way
! latency of each over the rounds. Run with gddt linked or preloaded; without it both lines
! measure the library.
program fortran_pingpong
  use mpi
  implicit none
  integer, parameter :: rounds = 21, trips = 5000
  integer :: rank, ranks, peer, ierr, round, trip, way
  double precision :: message(1), started, latency(rounds, 2)
  character(len=*), parameter :: names(2) = ['MPI_SEND/MPI_RECV  ', 'PMPI_SEND/PMPI_RECV']

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, ranks, ierr)
  if (ranks /= 2) then
    if (rank == 0) print '(a)', 'gddt-bench-fortran-pingpong: needs 2 ranks'
    call MPI_FINALIZE(ierr)
    stop 1
  end if
  peer = 1 - rank
  message = 1
  do round = 0, rounds
    do way = 1, 2
      call MPI_BARRIER(MPI_COMM_WORLD, ierr)
      started = MPI_WTIME()
      do trip = 1, trips
        if (way == 1) call exchange_through_mpi()
        if (way == 2) call exchange_through_pmpi()
      end do
      ! Round 0 warms up.
      if (round > 0) latency(round, way) = (MPI_WTIME() - started) / (2 * trips) * 1d6
    end do
  end do
  if (rank == 0) then
    print '(a, i0, a, i0, a)', 'Fortran 8-byte ping-pong, median one-way latency over ', rounds, &
      ' rounds of ', trips, ' round trips:'
    do way = 1, 2
      print '(2x, a, f8.3, a)', names(way), median(latency(:, way)), ' us'
    end do
    print '(2x, a, f7.2, a)', 'cost of the first over the second: ', &
      (median(latency(:, 1)) / median(latency(:, 2)) - 1) * 100, ' %'
  end if
  call MPI_FINALIZE(ierr)

contains

  subroutine exchange_through_mpi()
    if (rank == 0) then
      call MPI_SEND(message, 1, MPI_DOUBLE_PRECISION, peer, 1, MPI_COMM_WORLD, ierr)
      call MPI_RECV(message, 1, MPI_DOUBLE_PRECISION, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    else
      call MPI_RECV(message, 1, MPI_DOUBLE_PRECISION, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      call MPI_SEND(message, 1, MPI_DOUBLE_PRECISION, peer, 1, MPI_COMM_WORLD, ierr)
    end if
  end subroutine

  subroutine exchange_through_pmpi()
    if (rank == 0) then
      call PMPI_SEND(message, 1, MPI_DOUBLE_PRECISION, peer, 1, MPI_COMM_WORLD, ierr)
      call PMPI_RECV(message, 1, MPI_DOUBLE_PRECISION, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    else
      call PMPI_RECV(message, 1, MPI_DOUBLE_PRECISION, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      call PMPI_SEND(message, 1, MPI_DOUBLE_PRECISION, peer, 1, MPI_COMM_WORLD, ierr)
    end if
  end subroutine

  double precision function median(values)
    double precision, intent(in) :: values(:)
    double precision :: sorted(size(values)), swap
    integer :: i, j
    sorted = values
    do i = 2, size(sorted)
      do j = i, 2, -1
        if (sorted(j - 1) <= sorted(j)) exit
        swap = sorted(j)
        sorted(j) = sorted(j - 1)
        sorted(j - 1) = swap
      end do
    end do
    median = sorted((size(sorted) + 1) / 2)
  end function

end program fortran_pingpong

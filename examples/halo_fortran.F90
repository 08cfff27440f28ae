! gddt Fortran example: a 2-D grid per rank, decomposed along x around a ring of ranks, whose
! halo columns are exchanged with MPI_SENDRECV of an MPI_TYPE_VECTOR straight from GPU memory
! (host memory where no GPU is present). The grid comes from cudaMalloc through ISO_C_BINDING
! and c_f_pointer, as CUDA Fortran and OpenACC codes hand device arrays to MPI; nothing here
! knows about gddt. Fortran arrays are column-major, so a face of constant x (one row of the
! array) is ny elements nx + 2 apart.
program halo_fortran
  use mpi
  use, intrinsic :: iso_c_binding
  implicit none
  integer, parameter :: nx = 64, ny = 48
  integer :: rank, ranks, left, right, ierr, face, i, j, wrong
  real(c_double), target :: image((nx + 2) * (ny + 2))
  real(c_double), pointer :: grid(:, :)
  type(c_ptr) :: device
  logical :: on_gpu
  integer(c_size_t) :: bytes

  interface
    integer(c_int) function cudaGetDeviceCount(count) bind(C, name='cudaGetDeviceCount')
      import :: c_int
      integer(c_int) :: count
    end function
    integer(c_int) function cudaSetDevice(device) bind(C, name='cudaSetDevice')
      import :: c_int
      integer(c_int), value :: device
    end function
    integer(c_int) function cudaMalloc(pointer, bytes) bind(C, name='cudaMalloc')
      import :: c_ptr, c_size_t, c_int
      type(c_ptr) :: pointer
      integer(c_size_t), value :: bytes
    end function
    integer(c_int) function cudaMemcpy(destination, source, bytes, kind) bind(C, name='cudaMemcpy')
      import :: c_ptr, c_size_t, c_int
      type(c_ptr), value :: destination, source
      integer(c_size_t), value :: bytes
      integer(c_int), value :: kind
    end function
    integer(c_int) function cudaFree(pointer) bind(C, name='cudaFree')
      import :: c_ptr, c_int
      type(c_ptr), value :: pointer
    end function
  end interface
  integer(c_int), parameter :: host_to_device = 1, device_to_host = 2

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, ranks, ierr)
  left = modulo(rank - 1, ranks)
  right = modulo(rank + 1, ranks)

  ! Interior cells hold rank * 1e6 + i * 1e3 + j; the halo (i = 0, nx + 1) starts at -1.
  image = -1
  grid(0:nx + 1, 0:ny + 1) => image
  do j = 1, ny
    do i = 1, nx
      grid(i, j) = rank * 1d6 + i * 1d3 + j
    end do
  end do
  bytes = int(size(image), c_size_t) * c_sizeof(image(1))
  on_gpu = gpu_count() > 0
#ifdef GDDT_EXAMPLE_CUDA
  if (on_gpu) then
    ierr = cudaSetDevice(int(modulo(rank, gpu_count()), c_int))
    ierr = cudaMalloc(device, bytes)
    ierr = cudaMemcpy(device, c_loc(image), bytes, host_to_device)
    call c_f_pointer(device, grid, [nx + 2, ny + 2])
    grid(0:, 0:) => grid
  end if
#endif

  ! One face: ny cells of one x, nx + 2 apart.
  call MPI_TYPE_VECTOR(ny, 1, nx + 2, MPI_DOUBLE_PRECISION, face, ierr)
  call MPI_TYPE_COMMIT(face, ierr)
  call MPI_SENDRECV(grid(nx, 1), 1, face, right, 1, grid(0, 1), 1, face, left, 1, MPI_COMM_WORLD, &
                    MPI_STATUS_IGNORE, ierr)
  call MPI_SENDRECV(grid(1, 1), 1, face, left, 2, grid(nx + 1, 1), 1, face, right, 2, MPI_COMM_WORLD, &
                    MPI_STATUS_IGNORE, ierr)
  call MPI_TYPE_FREE(face, ierr)

#ifdef GDDT_EXAMPLE_CUDA
  if (on_gpu) then
    ierr = cudaMemcpy(c_loc(image), device, bytes, device_to_host)
    ierr = cudaFree(device)
    grid(0:nx + 1, 0:ny + 1) => image
  end if
#endif
  wrong = 0
  do j = 1, ny
    if (grid(0, j) /= left * 1d6 + nx * 1d3 + j) wrong = wrong + 1
    if (grid(nx + 1, j) /= right * 1d6 + 1d3 + j) wrong = wrong + 1
  end do
  if (any(grid(0, [0, ny + 1]) /= -1) .or. any(grid(nx + 1, [0, ny + 1]) /= -1)) wrong = wrong + 1
  call MPI_ALLREDUCE(MPI_IN_PLACE, wrong, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (wrong == 0) then
      write (*, '(a, i0, 3a)') 'fortran halo: ', ranks, ' ranks, grid in ', &
        merge('GPU memory ', 'host memory', on_gpu), ': all checks passed'
    else
      write (*, '(a, i0, a)') 'fortran halo: ', wrong, ' wrong halo cells'
    end if
  end if
  call MPI_FINALIZE(ierr)
  if (wrong /= 0) stop 1

contains

  integer function gpu_count()
    integer(c_int) :: count
    count = 0
#ifdef GDDT_EXAMPLE_CUDA
    if (cudaGetDeviceCount(count) /= 0) count = 0
#endif
    gpu_count = count
  end function

end program halo_fortran

! What the Fortran tests take from C (support.cpp): buffers of every memory kind, gddt's
! counters, and a check that reports a failure without stopping the rank.
module gddt_test_support
  use, intrinsic :: iso_c_binding
  implicit none
  private
  public :: usable, buffer_of, address_of, download, release, counter, staged_sides, check, failures
  public :: expect_elements, every_other, renewed

  interface
    integer(c_int) function fortran_test_memory_usable(name, local_rank) bind(C)
      import :: c_char, c_int
      character(kind=c_char), dimension(*) :: name
      integer(c_int), value :: local_rank
    end function
    type(c_ptr) function fortran_test_buffer(name, image, bytes) bind(C)
      import :: c_char, c_ptr, c_size_t
      character(kind=c_char), dimension(*) :: name
      type(c_ptr), value :: image
      integer(c_size_t), value :: bytes
    end function
    type(c_ptr) function fortran_test_address(buffer) bind(C)
      import :: c_ptr
      type(c_ptr), value :: buffer
    end function
    subroutine fortran_test_download(buffer, image, bytes) bind(C)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: buffer, image
      integer(c_size_t), value :: bytes
    end subroutine
    subroutine fortran_test_free(buffer) bind(C)
      import :: c_ptr
      type(c_ptr), value :: buffer
    end subroutine
    integer(c_long_long) function fortran_test_counter(name) bind(C)
      import :: c_char, c_long_long
      character(kind=c_char), dimension(*) :: name
    end function
  end interface

  integer, save :: failures = 0

contains

  logical function usable(memory, rank)
    character(len=*), intent(in) :: memory
    integer, intent(in) :: rank
    usable = fortran_test_memory_usable(trim(memory)//c_null_char, int(rank, c_int)) == 0
  end function

  ! A buffer of `memory` holding a copy of `image`.
  type(c_ptr) function buffer_of(memory, image)
    character(len=*), intent(in) :: memory
    real(c_double), intent(in), target :: image(:)
    buffer_of = fortran_test_buffer(trim(memory)//c_null_char, c_loc(image), &
                                    int(size(image) * c_sizeof(image(1)), c_size_t))
  end function

  ! The buffer's doubles, as a Fortran array that only MPI calls may touch.
  function address_of(buffer, n) result(values)
    type(c_ptr), intent(in) :: buffer
    integer, intent(in) :: n
    real(c_double), pointer :: values(:)
    call c_f_pointer(fortran_test_address(buffer), values, [n])
  end function

  subroutine download(buffer, image)
    type(c_ptr), intent(in) :: buffer
    real(c_double), intent(inout), target :: image(:)
    call fortran_test_download(buffer, c_loc(image), int(size(image) * c_sizeof(image(1)), c_size_t))
  end subroutine

  subroutine release(buffer)
    type(c_ptr), intent(in) :: buffer
    call fortran_test_free(buffer)
  end subroutine

  integer(c_long_long) function counter(name)
    character(len=*), intent(in) :: name
    counter = fortran_test_counter(name//c_null_char)
  end function

  ! Sides of point-to-point calls gddt handled itself (all but those it forwarded untouched).
  integer(c_long_long) function staged_sides()
    staged_sides = counter('p2p.device-bytes.sides') + counter('p2p.device-staged.sides') + &
                   counter('p2p.host-span.sides') + counter('p2p.host-staged.sides')
  end function

  ! Frees `buffer` and makes a new one of `memory` holding `image`; returns its elements.
  function renewed(buffer, memory, image) result(values)
    type(c_ptr), intent(inout) :: buffer
    character(len=*), intent(in) :: memory
    real(c_double), intent(in), target :: image(:)
    real(c_double), pointer :: values(:)
    call release(buffer)
    buffer = buffer_of(memory, image)
    values => address_of(buffer, size(image))
  end function

  ! Checks that `buffer` holds `want`.
  subroutine expect_elements(buffer, want, what, rank)
    type(c_ptr), intent(in) :: buffer
    real(c_double), intent(in) :: want(:)
    character(len=*), intent(in) :: what
    integer, intent(in) :: rank
    real(c_double), target :: seen(size(want))
    call download(buffer, seen)
    call check(all(seen == want), what//': received elements', rank)
  end subroutine

  ! What a receive of every other element of `sent` leaves in a buffer that held `poison`.
  function every_other(sent, poison) result(want)
    real(c_double), intent(in) :: sent(:), poison(:)
    real(c_double) :: want(size(sent))
    want = poison
    want(1::2) = sent(1::2)
  end function

  subroutine check(ok, what, rank)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    integer, intent(in) :: rank
    if (ok) return
    failures = failures + 1
    write (*, '(a, i0, 2a)') 'FAIL rank ', rank, ': ', what
  end subroutine

end module gddt_test_support

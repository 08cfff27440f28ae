# The Fortran side of the MPI library the C side was found in. FindMPI looks for the Fortran
# wrapper on its own, so a machine with two MPIs (Debian's Open MPI and MPICH side by side) can pair
# mpicc.mpich with Open MPI's default mpif90, and the Fortran tests then link one library's module
# with the other's runtime. Unless MPI_Fortran_COMPILER is given, the wrapper is the C wrapper's
# twin (mpicc.mpich -> mpifort.mpich, /opt/mpi/bin/mpicc -> /opt/mpi/bin/mpifort); either way the
# Fortran link must bring the C library, or Fortran stays off with a message.
# Sets GDDT_HAVE_FORTRAN (OFF with GDDT_ENABLE_FORTRAN=OFF: libgddt's entry points for Fortran callers
# need no Fortran compiler).
set(GDDT_HAVE_FORTRAN OFF)
if(GDDT_ENABLE_FORTRAN)
  include(CheckLanguage)
  check_language(Fortran)
endif()
if(GDDT_ENABLE_FORTRAN AND CMAKE_Fortran_COMPILER)
  enable_language(Fortran)
  if(NOT MPI_Fortran_COMPILER AND MPI_C_COMPILER)
    get_filename_component(_gddt_c_wrapper_dir "${MPI_C_COMPILER}" DIRECTORY)
    get_filename_component(_gddt_c_wrapper_name "${MPI_C_COMPILER}" NAME)
    if(_gddt_c_wrapper_name MATCHES "^mpicc(.*)$")
      set(_gddt_names mpifort${CMAKE_MATCH_1} mpif90${CMAKE_MATCH_1})
      if(_gddt_c_wrapper_dir)  # only there: another directory on the PATH may hold another MPI's
        find_program(GDDT_MPI_FORTRAN_WRAPPER NAMES ${_gddt_names} PATHS "${_gddt_c_wrapper_dir}" NO_DEFAULT_PATH)
      else()
        find_program(GDDT_MPI_FORTRAN_WRAPPER NAMES ${_gddt_names})
      endif()
      if(GDDT_MPI_FORTRAN_WRAPPER)
        set(MPI_Fortran_COMPILER "${GDDT_MPI_FORTRAN_WRAPPER}" CACHE FILEPATH "MPI Fortran wrapper, the C wrapper's twin")
      endif()
    endif()
  endif()
  if(MPI_Fortran_COMPILER OR NOT MPI_C_COMPILER)
    find_package(MPI COMPONENTS Fortran)
  else()
    message(STATUS "gddt: no Fortran wrapper beside ${MPI_C_COMPILER}: Fortran tests and example off "
                   "(name one with -DMPI_Fortran_COMPILER)")
  endif()
  if(MPI_Fortran_FOUND)
    set(GDDT_HAVE_FORTRAN ON)
    foreach(_gddt_library IN LISTS MPI_C_LIB_NAMES)
      if(NOT _gddt_library IN_LIST MPI_Fortran_LIB_NAMES)
        set(GDDT_HAVE_FORTRAN OFF)
      endif()
    endforeach()
    if(NOT GDDT_HAVE_FORTRAN)
      message(STATUS "gddt: the Fortran wrapper ${MPI_Fortran_COMPILER} links ${MPI_Fortran_LIB_NAMES}, not the C "
                     "library's ${MPI_C_LIB_NAMES}: another MPI's, so the Fortran tests and example are off")
    endif()
  endif()
endif()

# gddt_add_mpi_test(NAME <name> RANKS <k> COMMAND <exe> [args...]
#                   [ENVIRONMENT VAR=value...] [LABELS label...] [LAUNCHER_WRAPPER cmd...])
#
# <exe> is a target name or a path; generator expressions are allowed everywhere. Registers a CTest that runs `<exe> [args]` on k ranks through the MPI launcher found by
# FindMPI. ENVIRONMENT is applied to each rank (through `env` between the launcher and the
# program), not to the launcher: a variable such as LD_PRELOAD must reach the ranks only,
# never mpiexec itself. LAUNCHER_WRAPPER runs the launcher under a command of its own (a checker
# of the whole job's output). The test reserves k processors so `ctest -j` does not oversubscribe.
# A program that cannot run here prints "<program>: skipped: <reason>" and exits 0: the test is
# then skipped (SKIP_REGULAR_EXPRESSION), with no rank exiting non-zero, since Open MPI 4.1's
# mpiexec aborts such a job and its abort path was seen to crash (PMIx_Finalize).

include_guard(GLOBAL)

# What LD_PRELOAD must name for a test program that does not link gddt: libgddt.so, behind
# AddressSanitizer's runtime in sanitized builds (preloaded libraries load before the
# program's own, and ASan refuses to start unless its runtime comes first).
set(GDDT_TEST_PRELOAD $<TARGET_FILE:gddt>)
if(GDDT_SANITIZE MATCHES "address")
  execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=libasan.so
                  OUTPUT_VARIABLE _gddt_asan_runtime OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(GDDT_TEST_PRELOAD "${_gddt_asan_runtime}:${GDDT_TEST_PRELOAD}")
endif()

# Open MPI refuses to run as root and to start more ranks than cores unless told; the same
# flags are errors for MPICH's launcher, so they are added for Open MPI only.
function(_gddt_detect_open_mpi out_var)
  if(DEFINED CACHE{GDDT_MPIEXEC_IS_OPEN_MPI}
     AND GDDT_MPIEXEC_DETECTED_FOR STREQUAL "${MPIEXEC_EXECUTABLE}")
    set(${out_var} ${GDDT_MPIEXEC_IS_OPEN_MPI} PARENT_SCOPE)
    return()
  endif()
  set(is_open_mpi OFF)
  if(MPI_C_LIBRARY_VERSION_STRING MATCHES "Open MPI")
    set(is_open_mpi ON)
  elseif(NOT MPI_C_LIBRARY_VERSION_STRING AND MPIEXEC_EXECUTABLE)
    execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version
                    OUTPUT_VARIABLE launcher_version ERROR_VARIABLE launcher_version
                    TIMEOUT 30)
    if(launcher_version MATCHES "Open MPI|OpenRTE")
      set(is_open_mpi ON)
    endif()
  endif()
  set(GDDT_MPIEXEC_IS_OPEN_MPI ${is_open_mpi} CACHE INTERNAL "mpiexec belongs to Open MPI")
  set(GDDT_MPIEXEC_DETECTED_FOR "${MPIEXEC_EXECUTABLE}" CACHE INTERNAL "launcher of that answer")
  set(${out_var} ${is_open_mpi} PARENT_SCOPE)
endfunction()

function(gddt_add_mpi_test)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "NAME;RANKS" "COMMAND;ENVIRONMENT;LABELS;LAUNCHER_WRAPPER")
  if(NOT arg_NAME OR NOT arg_RANKS OR NOT arg_COMMAND)
    message(FATAL_ERROR "gddt_add_mpi_test: NAME, RANKS and COMMAND are required")
  endif()
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "gddt_add_mpi_test(${arg_NAME}): unknown arguments ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT MPIEXEC_EXECUTABLE)
    message(FATAL_ERROR "gddt_add_mpi_test(${arg_NAME}): FindMPI found no MPIEXEC_EXECUTABLE")
  endif()

  _gddt_detect_open_mpi(is_open_mpi)
  set(launcher_flags ${MPIEXEC_PREFLAGS})
  if(is_open_mpi)
    list(APPEND launcher_flags --allow-run-as-root --oversubscribe)
  endif()

  set(rank_wrapper)
  if(arg_ENVIRONMENT)
    find_program(GDDT_ENV_PROGRAM env REQUIRED)
    set(rank_wrapper ${GDDT_ENV_PROGRAM} ${arg_ENVIRONMENT})
  endif()

  list(POP_FRONT arg_COMMAND program)
  if(TARGET ${program})
    set(program $<TARGET_FILE:${program}>)
  endif()
  add_test(NAME ${arg_NAME}
           COMMAND ${arg_LAUNCHER_WRAPPER} ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${arg_RANKS} ${launcher_flags}
                   ${rank_wrapper} ${program} ${MPIEXEC_POSTFLAGS} ${arg_COMMAND})
  set_tests_properties(${arg_NAME} PROPERTIES PROCESSORS ${arg_RANKS} SKIP_REGULAR_EXPRESSION ": skipped: ")
  if(arg_LABELS)
    set_tests_properties(${arg_NAME} PROPERTIES LABELS "${arg_LABELS}")
  endif()
endfunction()

# gddt_split_nodes_environment(<var> <ranks-per-node>): the rank environment of a test that runs one
# machine as several nodes (usage.md, "Testing a multi-node job on one machine"): GDDT_NODE_SPLIT
# draws the nodes for gddt, host memory goes through gddt's machinery as device memory would, and the
# MPI library keeps off its shared memory, so that messages between the nodes travel as the library
# moves them between machines: Open MPI's TCP BTL over the loopback (4.1's vader off) and, where its
# UCX PML runs (the CUDA-aware bundle), UCX's TCP transport; MPICH's ch4 taking every process for one
# of another node (MPIR_CVAR_NOLOCAL). UCX under MPICH keeps its own shared memory here: with
# UCX_TLS=tcp,self, Debian's MPICH 4.0.2 hangs in MPI_Finalize in about one run of six, gddt loaded or
# not (usage.md).
function(gddt_split_nodes_environment out_var ranks_per_node)
  set(environment GDDT_NODE_SPLIT=${ranks_per_node} GDDT_P2P_HOST=gddt GDDT_PACK_HOST=gddt GDDT_COLLECTIVE_HOST=gddt)
  _gddt_detect_open_mpi(is_open_mpi)
  if(is_open_mpi)
    # cuda_copy lets UCX's TCP transport take device buffers; a UCX without CUDA warns of it. UCX
    # leaves the loopback interface out of TCP unless told, and a machine may have no other.
    set(ucx_transports tcp,self)
    if(GDDT_HAVE_CUDA)
      string(APPEND ucx_transports ,cuda_copy)
    endif()
    list(APPEND environment OMPI_MCA_btl=tcp,self OMPI_MCA_btl_tcp_if_include=lo UCX_TLS=${ucx_transports}
         UCX_TCP_LOOPBACK_ENABLE=y)
    # Open MPI's UCX PML takes only the transports and devices of its own lists (InfiniBand, CUDA
    # IPC) unless told any will do: over TCP alone it declines, and where it is forced no PML opens.
    if(MPIEXEC_PREFLAGS MATCHES "pml;ucx")
      list(APPEND environment OMPI_MCA_opal_common_ucx_tls=any OMPI_MCA_opal_common_ucx_devices=any)
    endif()
  else()
    list(APPEND environment MPIR_CVAR_NOLOCAL=1)
  endif()
  set(${out_var} ${environment} PARENT_SCOPE)
endfunction()

# Configures gddt the README's way on a machine with two MPIs whose default mpif90 is the other
# MPI's (a PATH entry put first names it so), and checks that the Fortran side is the C wrapper's
# twin; then names the other MPI's wrapper outright and checks that Fortran is switched off with a
# message rather than mixing the two libraries.
#
# Inputs (-D): SOURCE_DIR, WORK_DIR, GENERATOR, MPI_C_COMPILER (this build's C wrapper).

function(configure out)
  file(REMOVE_RECURSE ${WORK_DIR}/build)
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env "PATH=${WORK_DIR}/bin:$ENV{PATH}"
            ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/build -G ${GENERATOR} -DMPI_C_COMPILER=${MPI_C_COMPILER}
            -DGDDT_ENABLE_CUDA=OFF -DGDDT_BUILD_TESTS=OFF -DGDDT_BUILD_BENCH=OFF ${ARGN}
    RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "configure failed (${status}):\n${output}")
  endif()
  set(${out} "${output}" PARENT_SCOPE)
endfunction()

function(cached name out)
  file(STRINGS ${WORK_DIR}/build/CMakeCache.txt line REGEX "^${name}:")
  string(REGEX REPLACE "^[^=]*=" "" value "${line}")
  set(${out} "${value}" PARENT_SCOPE)
endfunction()

get_filename_component(c_name ${MPI_C_COMPILER} NAME)
get_filename_component(c_dir ${MPI_C_COMPILER} DIRECTORY)
string(REGEX REPLACE "^mpicc" "" suffix ${c_name})
set(other "")
foreach(candidate mpif90.openmpi mpif90.mpich mpifort.openmpi mpifort.mpich)
  string(REGEX REPLACE "^mpif(90|ort)" "" candidate_suffix ${candidate})
  if(NOT candidate_suffix STREQUAL suffix AND EXISTS ${c_dir}/${candidate} AND NOT other)
    set(other ${c_dir}/${candidate})
  endif()
endforeach()
if(NOT other OR NOT suffix)
  message("SKIP: needs two MPIs side by side, each with suffixed wrappers (${c_name})")
  return()
endif()

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/bin)
file(CREATE_LINK ${other} ${WORK_DIR}/bin/mpif90 SYMBOLIC)
file(CREATE_LINK ${other} ${WORK_DIR}/bin/mpifort SYMBOLIC)

configure(output)
cached(MPI_Fortran_COMPILER fortran)
get_filename_component(fortran_name "${fortran}" NAME)
if(NOT fortran_name MATCHES "^mpif(90|ort)${suffix}$")
  message(FATAL_ERROR "with ${c_name} and ${other} first on the PATH, Fortran took ${fortran}\n${output}")
endif()
if(NOT output MATCHES "Fortran bindings ON")
  message(FATAL_ERROR "Fortran is off with ${fortran}\n${output}")
endif()

configure(output -DMPI_Fortran_COMPILER=${other})
if(NOT output MATCHES "another MPI's, so the Fortran tests and example are off" OR NOT output MATCHES "Fortran bindings OFF")
  message(FATAL_ERROR "with ${c_name} and ${other} named, Fortran was not switched off:\n${output}")
endif()
message("passed: ${fortran_name} beside ${c_name}; ${other} refused")
file(REMOVE_RECURSE ${WORK_DIR})

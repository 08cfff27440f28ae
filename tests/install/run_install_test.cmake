# Installs gddt into a temporary prefix, moves the prefix elsewhere (the package must be
# relocatable), then builds and runs a consumer through find_package(gddt) and another
# through pkg-config.
#
# Inputs (-D): BUILD_DIR (the gddt build), WORK_DIR (scratch), LIBDIR (CMAKE_INSTALL_LIBDIR),
# GENERATOR, C_COMPILER, MPI_C_COMPILER.

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(NOT status EQUAL 0)
    list(JOIN ARGN " " command)
    message(FATAL_ERROR "failed (${status}): ${command}\n${output}")
  endif()
  set(run_output "${output}" PARENT_SCOPE)
endfunction()

set(staging ${WORK_DIR}/staging)
set(prefix ${WORK_DIR}/moved)
file(REMOVE_RECURSE ${WORK_DIR})
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${staging})
file(RENAME ${staging} ${prefix})

foreach(expected include/gddt/gddt.h include/gddt/gddt_mpi.h ${LIBDIR}/libgddt.so ${LIBDIR}/libgddt.so.0
        bin/gddt-info ${LIBDIR}/cmake/gddt/gddtConfig.cmake ${LIBDIR}/cmake/gddt/gddtConfigVersion.cmake
        ${LIBDIR}/cmake/gddt/gddtTargets.cmake ${LIBDIR}/pkgconfig/gddt.pc)
  if(NOT EXISTS ${prefix}/${expected})
    message(FATAL_ERROR "not installed: ${expected}")
  endif()
endforeach()
file(GLOB_RECURSE text_files ${prefix}/${LIBDIR}/cmake/*.cmake ${prefix}/${LIBDIR}/pkgconfig/*.pc)
foreach(text_file ${text_files})
  file(READ ${text_file} text)
  string(FIND "${text}" "${staging}" position)
  if(NOT position EQUAL -1)
    message(FATAL_ERROR "${text_file} names the install prefix: not relocatable")
  endif()
endforeach()

run(${prefix}/bin/gddt-info --help)

# find_package(gddt)
run(${CMAKE_COMMAND} -S ${CMAKE_CURRENT_LIST_DIR}/consumer -B ${WORK_DIR}/cmake-consumer -G ${GENERATOR}
    -DCMAKE_C_COMPILER=${C_COMPILER} -DMPI_C_COMPILER=${MPI_C_COMPILER} -DCMAKE_PREFIX_PATH=${prefix})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/cmake-consumer)
run(${WORK_DIR}/cmake-consumer/consumer)
message(STATUS "find_package consumer: ${run_output}")

# pkg-config
find_program(PKG_CONFIG NAMES pkg-config pkgconf REQUIRED)
set(ENV{PKG_CONFIG_PATH} ${prefix}/${LIBDIR}/pkgconfig)
run(${PKG_CONFIG} --cflags --libs gddt)
separate_arguments(flags UNIX_COMMAND "${run_output}")
run(${C_COMPILER} ${CMAKE_CURRENT_LIST_DIR}/consumer/consumer.c ${flags} -o ${WORK_DIR}/pkg-config-consumer)
run(${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${prefix}/${LIBDIR} ${WORK_DIR}/pkg-config-consumer)
message(STATUS "pkg-config consumer: ${run_output}")

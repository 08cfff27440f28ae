# `cmake --install` lays out a relocatable package: headers, libgddt.so with its soname
# links, gddt-info, a CMake package exporting gddt::gddt, and a pkg-config file. Nothing
# installed names the install prefix: the CMake files locate themselves and gddt.pc
# derives its prefix from ${pcfiledir}.
include(CMakePackageConfigHelpers)

set(GDDT_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/gddt)

install(TARGETS gddt EXPORT gddtTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/gddt DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h" PATTERN "*.cuh")
install(TARGETS gddt-info gddt-tune RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

install(EXPORT gddtTargets NAMESPACE gddt:: DESTINATION ${GDDT_INSTALL_CMAKEDIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/gddtConfig.cmake.in
  ${PROJECT_BINARY_DIR}/gddtConfig.cmake INSTALL_DESTINATION ${GDDT_INSTALL_CMAKEDIR})
# 0.x releases may change the API between minor versions.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/gddtConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/gddtConfig.cmake ${PROJECT_BINARY_DIR}/gddtConfigVersion.cmake
  DESTINATION ${GDDT_INSTALL_CMAKEDIR})

# gddt.pc sits in <libdir>/pkgconfig; the prefix is that many levels up.
file(RELATIVE_PATH GDDT_PC_PREFIX_FROM_PCFILEDIR
  /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" GDDT_PC_PREFIX_FROM_PCFILEDIR "${GDDT_PC_PREFIX_FROM_PCFILEDIR}")
# The MPI gddt was built with, so `cc $(pkg-config --cflags --libs gddt)` is enough.
set(GDDT_PC_MPI_INCLUDES ${MPI_C_INCLUDE_DIRS})
list(TRANSFORM GDDT_PC_MPI_INCLUDES PREPEND "-I")
list(JOIN GDDT_PC_MPI_INCLUDES " " GDDT_PC_MPI_CFLAGS)
list(JOIN MPI_C_LIBRARIES " " GDDT_PC_MPI_LIBS)
configure_file(${CMAKE_CURRENT_LIST_DIR}/gddt.pc.in ${PROJECT_BINARY_DIR}/gddt.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/gddt.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

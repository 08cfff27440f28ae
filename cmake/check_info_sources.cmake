# Fails when `gddt-info --settings` does not show, for each setting, the value in force and why:
# a gddt-tune profile value with its path, the built-in model, the environment, a config file
# with its path, and a plain default.
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/gddt)
file(WRITE ${WORK_DIR}/gddt/profile.conf "# gddt-tune profile, measured on a test GPU\nSTAGING_CHUNK=1M\n")
file(WRITE ${WORK_DIR}/gddt/gddt.conf "RESIDENT_MAX=32K\n")
set(ENV{XDG_CONFIG_HOME} ${WORK_DIR})
set(ENV{GDDT_ZEROCOPY_MAX} 2M)
execute_process(COMMAND ${INFO} --settings OUTPUT_VARIABLE output RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "gddt-info --settings failed (${result}):\n${output}")
endif()
foreach(expected
    "GDDT_STAGING_CHUNK +1M +gddt-tune profile ${WORK_DIR}/gddt/profile.conf "
    "GDDT_ZEROCOPY_MAX +2M +environment "
    "GDDT_RESIDENT_MAX +32K +file ${WORK_DIR}/gddt/gddt.conf "
    "GDDT_DEVICE_STAGING_MIN +16K +built-in model "
    "GDDT_POOL_PINNED_MAX +256M +default "
    "gddt-tune profile: ${WORK_DIR}/gddt/profile.conf\n"
    "Configuration problems: none")
  if(NOT output MATCHES "${expected}")
    message(FATAL_ERROR "gddt-info --settings does not show '${expected}':\n${output}")
  endif()
endforeach()

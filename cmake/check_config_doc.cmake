# Fails when docs/configuration.md differs from what `gddt-info --markdown` prints, so the
# documented settings table cannot drift from the source table.
execute_process(COMMAND ${INFO} --markdown OUTPUT_VARIABLE generated RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "gddt-info --markdown failed (${result})")
endif()
file(READ ${DOC} documented)
if(NOT generated STREQUAL documented)
  message(FATAL_ERROR "docs/configuration.md is out of date: regenerate it with `gddt-info --markdown > docs/configuration.md`")
endif()

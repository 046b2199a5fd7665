# Runs a checker against a stub lab and checks that it fails cleanly: a non-zero exit with the
# "not implemented: see ..." message, and no crash. Without a GPU the suite skips, and so does
# this check. Usage: cmake -DTEST_BINARY=<checker> "-DLAB_ARGS=--lab=<library>;..." -P CheckStub.cmake
execute_process(COMMAND ${TEST_BINARY} ${LAB_ARGS} --gtest_brief=1
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 100)
set(all "${out}${err}")
if(all MATCHES "no CUDA device")
  message("no CUDA device: the stub check needs a GPU and is skipped")
  return()
endif()
if(NOT rc MATCHES "^[0-9]+$")
  message(FATAL_ERROR "stub crashed or hung (${rc}):\n${all}")
endif()
if(rc EQUAL 0)
  message(FATAL_ERROR "stub passed its tests; an untouched stub must fail:\n${all}")
endif()
if(NOT all MATCHES "not implemented: see labs/")
  message(FATAL_ERROR "stub failed without the 'not implemented' message:\n${all}")
endif()
string(REGEX MATCHALL "not implemented: see labs/[^ \n\"]+" hits "${all}")
list(REMOVE_DUPLICATES hits)
message("stub fails cleanly (exit ${rc}): ${hits}")

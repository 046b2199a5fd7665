# reduce_write_lab_exports_map(<catalogue> <output>)
# Writes the GNU ld version script of every lab library from the catalogue (course.json): it
# exports the entry points of common/include/reduce/lab.cuh and nothing else, so a student's
# reduce::sum_helper or reduce_evil_lab stays local. Linked with
#   -Xlinker --version-script=<output>   (nvcc)
#   -Wl,--version-script=<output>        (g++)
# Names are exact (quoted C++ names are not globs). The grader checks the exports again: the
# getters as the build named them (course-manifest.json's `getter`), the C++ names from the
# catalogue (library_check.hpp). Used by the course build and by the grader's tests.
include_guard(GLOBAL)
include(${CMAKE_CURRENT_LIST_DIR}/ResultKinds.cmake)

# reduce_name_entry_getters(<catalogue>)
# The one rule that names the C getter a lab library exports an entry point of lab.cuh by:
# reduce_<op>_lab, <op> being the first operation of the catalogue (course.json) with that entry
# (reduce_sum_lab serves sum and sum_deterministic). Sets the global property
# REDUCE_ENTRY_<entry>_GETTER of each entry (an entry already named keeps its name, so a second
# call changes nothing). Everything else reads the property: the exports and course_entries.inc
# (CourseLabs.cmake), the version script (below) and course-manifest.json (each operation's
# `getter`, which the grader's export check reads).
function(reduce_name_entry_getters catalogue)
  file(READ ${catalogue} course)
  string(JSON count LENGTH "${course}" operations)
  math(EXPR last "${count} - 1")
  foreach(i RANGE ${last})
    string(JSON name GET "${course}" operations ${i} name)
    string(JSON entry GET "${course}" operations ${i} entry)
    get_property(named GLOBAL PROPERTY REDUCE_ENTRY_${entry}_GETTER SET)
    if(NOT named)
      set_property(GLOBAL PROPERTY REDUCE_ENTRY_${entry}_GETTER reduce_${name}_lab)
    endif()
  endforeach()
endfunction()

function(reduce_write_lab_exports_map catalogue output)
  reduce_name_entry_getters(${catalogue})
  file(READ ${catalogue} course)
  string(JSON count LENGTH "${course}" operations)
  math(EXPR last "${count} - 1")
  set(seen "")
  set(c_names "")
  set(cxx_names "")
  foreach(i RANGE ${last})
    string(JSON name GET "${course}" operations ${i} name)
    string(JSON entry GET "${course}" operations ${i} entry)
    string(JSON result GET "${course}" operations ${i} result)
    if(entry IN_LIST seen)
      continue()  # one getter per entry point
    endif()
    list(APPEND seen ${entry})
    get_property(getter GLOBAL PROPERTY REDUCE_ENTRY_${entry}_GETTER)
    string(APPEND c_names "    ${getter};\n")
    # The demangled signatures of lab.cuh, as the result kind has them.
    reduce_result_kind("${result}" kind "${catalogue}: operation ${name}")
    if(NOT kind_WORKSPACE_ARGS STREQUAL "")
      string(APPEND cxx_names
             "      \"reduce::${entry}_workspace_bytes(${kind_WORKSPACE_ARGS})\";\n")
    endif()
    string(APPEND cxx_names "      \"reduce::${entry}(${kind_CALL})\";\n")
  endforeach()
  file(CONFIGURE OUTPUT ${output} CONTENT
"/* Generated from course.json by cmake/LabExports.cmake: do not edit. */
{
  global:
${c_names}    extern \"C++\" {
${cxx_names}    };
  local:
    *;
};
" @ONLY)
endfunction()

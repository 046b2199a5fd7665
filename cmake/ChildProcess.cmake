# The one process starter (common/include/reduce/child_process.hpp): the grader and the checker's
# side of the lab runner link it. Standard library and POSIX only, no CUDA, so the grader built
# on its own (without common/) defines it here too; included from both, it is defined once.
include_guard(GLOBAL)
find_package(Threads REQUIRED)
add_library(reduce_child_process STATIC ${CMAKE_CURRENT_LIST_DIR}/../common/src/child_process.cpp)
target_include_directories(reduce_child_process PUBLIC ${CMAKE_CURRENT_LIST_DIR}/../common/include)
target_link_libraries(reduce_child_process PUBLIC Threads::Threads)
target_compile_features(reduce_child_process PUBLIC cxx_std_17)
target_compile_options(reduce_child_process PRIVATE -Wall -Wextra)
set_target_properties(reduce_child_process PROPERTIES POSITION_INDEPENDENT_CODE ON)

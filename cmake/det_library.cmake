# det_cc_library(NAME <name> [SRCS ...] [DEPS ...])
#
# One library target per top-level folder (STYLE.md). Targets are named det_<name>, include paths
# are rooted at the repository (`#include "bus/envelope.h"`), and a folder without sources yet
# becomes an INTERFACE target so dependents can already name it.
function(det_cc_library)
  cmake_parse_arguments(DET "" "NAME" "SRCS;DEPS" ${ARGN})
  set(target det_${DET_NAME})
  if(DET_SRCS)
    add_library(${target} STATIC ${DET_SRCS})
    target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}/generated)
    target_link_libraries(${target} PUBLIC ${DET_DEPS})
  else()
    add_library(${target} INTERFACE)
    target_include_directories(${target} INTERFACE ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}/generated)
    target_link_libraries(${target} INTERFACE ${DET_DEPS})
  endif()
endfunction()

# det_cc_binary(NAME <name> SRCS ... DEPS ...): a thin main linked against folder libraries.
function(det_cc_binary)
  cmake_parse_arguments(DET "" "NAME" "SRCS;DEPS" ${ARGN})
  add_executable(${DET_NAME} ${DET_SRCS})
  target_link_libraries(${DET_NAME} PRIVATE ${DET_DEPS})
endfunction()

# det_cc_test(NAME <name> LABEL <label> [TIMEOUT s] [COST s] SRCS ... DEPS ...): a GoogleTest binary
# whose tests are registered with ctest under LABEL; COST: about how long each takes (ctest starts
# the costliest first when it has no times of its own yet).
function(det_cc_test)
  cmake_parse_arguments(DET "" "NAME;LABEL;TIMEOUT;COST" "SRCS;DEPS" ${ARGN})
  if(NOT DET_TIMEOUT)
    set(DET_TIMEOUT 120)
  endif()
  if(NOT DET_COST)
    set(DET_COST 0)
  endif()
  add_executable(${DET_NAME} ${DET_SRCS})
  # A test's own code at -O0 in optimized trees: it compiles in well under half the time (the
  # GoogleTest macros expand to a great deal of code), while the libraries it links, what ships
  # and what the benchmarks measure, stay optimized.
  target_compile_options(${DET_NAME} PRIVATE $<$<CONFIG:RelWithDebInfo,Release>:-O0>)
  target_link_libraries(${DET_NAME} PRIVATE ${DET_DEPS} GTest::gmock GTest::gtest_main)
  gtest_discover_tests(${DET_NAME}
    PROPERTIES LABELS ${DET_LABEL} TIMEOUT ${DET_TIMEOUT} COST ${DET_COST}
    ENVIRONMENT "${DET_TEST_ENVIRONMENT}"
    DISCOVERY_TIMEOUT 30)
endfunction()

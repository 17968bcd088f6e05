# The det CLI links its third-party libraries statically (DET_STATIC_CLI, default ON): with
# libzmq's shared library and its dependencies (libsodium, OpenPGM, NORM, Kerberos, ...) det took
# 10 ms to start, most of each `det cmd run`; linked statically with libstdc++ it loads libc alone.
#
# A target opts in with det_link_statically(target). Libraries that name det_zmq, det_yaml_cpp or
# det_zlib then give that target the static archives and every other target the shared libraries,
# decided per linked binary through the DET_STATIC_LINK target property. libzmq's GSSAPI mechanism, which
# det never enables, is answered by cli/gssapi_refusal.cc instead of Kerberos's shared libraries.
option(DET_STATIC_CLI "Link the det CLI's third-party libraries statically" ON)

set(DET_STATIC_ZMQ_ARCHIVES zmq sodium pgm norm protokit bsd md)
set(DET_STATIC_CLI_READY ${DET_STATIC_CLI})
if(DET_SANITIZE OR DET_TSAN OR DET_FUZZ)
  set(DET_STATIC_CLI_READY OFF)  # sanitizer runtimes want the shared C++ library
endif()
foreach(name IN LISTS DET_STATIC_ZMQ_ARCHIVES ITEMS yaml-cpp z)
  find_library(DET_STATIC_LIB_${name} NAMES lib${name}.a)
  if(NOT DET_STATIC_LIB_${name})
    message(STATUS "det CLI: lib${name}.a not found, so det links shared libraries (slower start)")
    set(DET_STATIC_CLI_READY OFF)
  endif()
endforeach()

set(DET_STATIC_CONSUMER "$<BOOL:$<TARGET_PROPERTY:DET_STATIC_LINK>>")
set(DET_SHARED_CONSUMER "$<NOT:${DET_STATIC_CONSUMER}>")

add_library(det_zmq INTERFACE)
# cppzmq is header-only (zmq.hpp in /usr/include); its CMake target would link the shared libzmq.
target_link_libraries(det_zmq INTERFACE "$<${DET_SHARED_CONSUMER}:PkgConfig::ZMQ>")
add_library(det_yaml_cpp INTERFACE)
target_link_libraries(det_yaml_cpp INTERFACE "$<${DET_SHARED_CONSUMER}:yaml-cpp>")
target_include_directories(det_yaml_cpp INTERFACE ${YAML_CPP_INCLUDE_DIR})
find_package(ZLIB REQUIRED)
add_library(det_zlib INTERFACE)  # det decodes stored log chunks (storage/log_chunk.h)
target_link_libraries(det_zlib INTERFACE "$<${DET_SHARED_CONSUMER}:ZLIB::ZLIB>")
target_include_directories(det_zlib INTERFACE ${ZLIB_INCLUDE_DIRS})

if(DET_STATIC_CLI_READY)
  add_library(det_gssapi_refusal STATIC ${PROJECT_SOURCE_DIR}/cli/gssapi_refusal.cc)
  set(zmq_archives ${DET_STATIC_LIB_zmq} det_gssapi_refusal)
  foreach(name IN LISTS DET_STATIC_ZMQ_ARCHIVES)
    if(NOT name STREQUAL "zmq")
      list(APPEND zmq_archives ${DET_STATIC_LIB_${name}})
    endif()
  endforeach()
  target_link_libraries(det_zmq INTERFACE "$<${DET_STATIC_CONSUMER}:${zmq_archives}>")
  target_link_libraries(det_yaml_cpp INTERFACE "$<${DET_STATIC_CONSUMER}:${DET_STATIC_LIB_yaml-cpp}>")
  target_link_libraries(det_zlib INTERFACE "$<${DET_STATIC_CONSUMER}:${DET_STATIC_LIB_z}>")
endif()

# det_link_statically(target): `target` gets the static archives above and the static C++ runtime
# (when they were all found); otherwise nothing changes.
function(det_link_statically target)
  if(DET_STATIC_CLI_READY)
    set_target_properties(${target} PROPERTIES DET_STATIC_LINK ON)
    target_link_options(${target} PRIVATE -static-libstdc++ -static-libgcc)
  endif()
endfunction()

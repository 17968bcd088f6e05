# Every third-party library comes from a Debian 12 package (scripts/install-deps.sh installs them).
find_package(PkgConfig REQUIRED)
pkg_check_modules(ZMQ REQUIRED IMPORTED_TARGET libzmq)
find_package(spdlog REQUIRED CONFIG)
find_package(yaml-cpp REQUIRED CONFIG)
find_package(CLI11 REQUIRED CONFIG)
find_package(cppzmq REQUIRED CONFIG)
find_package(Threads REQUIRED)
find_package(GTest REQUIRED)
include(GoogleTest)
if(NOT DET_UNIT_ONLY)
  find_package(benchmark REQUIRED CONFIG)
endif()

# msgpack-cxx is header-only; its CMake package drags in Boost, which the codec does not need, so
# the headers are used directly with Boost switched off.
include(CheckIncludeFileCXX)
set(CMAKE_REQUIRED_DEFINITIONS -DMSGPACK_NO_BOOST)
check_include_file_cxx(msgpack.hpp DET_HAVE_MSGPACK)
unset(CMAKE_REQUIRED_DEFINITIONS)
if(NOT DET_HAVE_MSGPACK)
  message(FATAL_ERROR "msgpack.hpp not found: install libmsgpack-cxx-dev")
endif()
add_library(det_msgpack INTERFACE)
target_compile_definitions(det_msgpack INTERFACE MSGPACK_NO_BOOST MSGPACK_DEFAULT_API_VERSION=3)

find_package(OpenSSL REQUIRED)
find_package(CURL REQUIRED)  # cloud APIs and metadata services (common/http_client)
find_package(pugixml REQUIRED CONFIG)  # EC2's XML responses (cloud_aws)
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)  # HTTP clients and fakes in tests
# Boost.Beast over Asio (header-only): the master's HTTP server (master/front/http/README.md says why).
find_package(Boost 1.74 REQUIRED)
pkg_check_modules(LIBARCHIVE REQUIRED IMPORTED_TARGET libarchive)  # model definition archives: det
# includes its headers and opens the library at run time (cli/libarchive_loader.h)

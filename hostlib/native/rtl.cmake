# RTL in the loop: firmware/rtl/loopback_top.v as a Verilator C++ model (hilrig_rtl),
# linked by hilrig-sim only (`hilrig-sim --firmware rtl`, docs/firmware.md). The core
# library never sees Verilator. Needs Debian's verilator (Makefile APT_PACKAGES), whose
# verilator-config.cmake provides verilate(); -DHILRIG_RTL=OFF builds the simulator
# without it (--firmware rtl then says so).
option(HILRIG_RTL "build the Verilator model of firmware/rtl/loopback_top into hilrig-sim" ON)
set(HILRIG_FIRMWARE_DIR ${PROJECT_SOURCE_DIR}/firmware)
if(NOT HILRIG_RTL)
  return()
endif()
find_package(verilator HINTS $ENV{VERILATOR_ROOT})
if(NOT verilator_FOUND)
  message(FATAL_ERROR "verilator not found: install it (`make deps`, Debian package verilator) "
                      "or configure with -DHILRIG_RTL=OFF (hilrig-sim then has no --firmware rtl)")
endif()

# The image the model is: firmware/images.yaml's entry for the simulator's RTL core
# (version and rtl_git_hash, which hostlib/tests/test_firmware_images.py keeps equal to
# the tree hash of firmware/rtl). hilrig-sim reports them in `hello` (hilrig rig check).
set(HILRIG_RTL_IMAGE hilrig-loopback-rtl)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${HILRIG_FIRMWARE_DIR}/images.yaml)
file(READ ${HILRIG_FIRMWARE_DIR}/images.yaml _manifest)
string(FIND "${_manifest}" "image: ${HILRIG_RTL_IMAGE}\n" _at)
if(_at LESS 0)
  message(FATAL_ERROR "firmware/images.yaml has no image ${HILRIG_RTL_IMAGE}")
endif()
string(SUBSTRING "${_manifest}" ${_at} -1 _entry)
string(REGEX MATCH "version: ([0-9A-Za-z.+-]+)" _m "${_entry}")
set(HILRIG_RTL_VERSION ${CMAKE_MATCH_1})
string(REGEX MATCH "rtl_git_hash: ([0-9a-f]+)" _m "${_entry}")
set(HILRIG_RTL_GIT_HASH ${CMAKE_MATCH_1})
if(NOT HILRIG_RTL_VERSION OR NOT HILRIG_RTL_GIT_HASH)
  message(FATAL_ERROR "firmware/images.yaml: image ${HILRIG_RTL_IMAGE} needs version and rtl_git_hash")
endif()

# loopback_top's parameters for the model: the image's (a stream must match them).
set(HILRIG_RTL_PARAMS -GCHANNELS=1 -GSAMPLE_FORMAT=1 -GSAMPLES_PER_FRAME=248 -GSTREAM_ID=0 -GCRC_ENABLE=0
    -GRX_FIFO_ADDR_BITS=9 -GTX_FIFO_ADDR_BITS=9)
add_library(hilrig_rtl STATIC rtl/loopback_rtl.cpp)
# Verilator's own headers and generated code are not -Wextra clean.
# Verilator's generated files are compiled one by one, as Verilator lays them out.
set_target_properties(hilrig_rtl PROPERTIES UNITY_BUILD OFF)
target_compile_options(hilrig_rtl PRIVATE -Wno-unused-parameter)
target_link_libraries(hilrig_rtl PUBLIC hilrig::core)
target_compile_definitions(hilrig_rtl PRIVATE
  HILRIG_RTL_IMAGE="${HILRIG_RTL_IMAGE}" HILRIG_RTL_VERSION="${HILRIG_RTL_VERSION}"
  HILRIG_RTL_GIT_HASH="${HILRIG_RTL_GIT_HASH}")
# Speed is the point (docs/performance.md): -O3 on the model, X assigned fast, no
# assertions, no tracing; the 64-bit data path is the RTL's own.
verilate(hilrig_rtl
  SOURCES ${HILRIG_FIRMWARE_DIR}/rtl/loopback_top.v
  INCLUDE_DIRS ${HILRIG_FIRMWARE_DIR}/rtl
  TOP_MODULE loopback_top
  PREFIX Vloopback_top
  VERILATOR_ARGS -O3 --x-assign fast --x-initial fast --noassert ${HILRIG_RTL_PARAMS}
  OPT_FAST -O3)
set(HILRIG_SIM_RTL_LIB hilrig_rtl)

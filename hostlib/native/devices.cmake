# Real-device drivers (issue 5): the UHD and SoapySDR drivers in hostlib._native and
# the SoapySDR module driver=hilrig. Optional: without libuhd-dev / libsoapysdr-dev
# the tree still builds (HAVE_UHD / HAVE_SOAPY are False and the drivers say so).
target_sources(_native PRIVATE python/devices.cpp)

find_package(SoapySDR CONFIG QUIET)
if(SoapySDR_FOUND)
  message(STATUS "hilrig: SoapySDR ${SoapySDR_VERSION} found: soapy driver and module driver=hilrig")
  set(HILRIG_SOAPY_MODULE_DIR ${CMAKE_BINARY_DIR}/soapy-modules)
  target_sources(_native PRIVATE radio/soapy_driver.cpp)
  target_link_libraries(_native PRIVATE SoapySDR)
  target_compile_definitions(_native PRIVATE HILRIG_HAVE_SOAPY=1
    HILRIG_SOAPY_MODULE_DIR="${HILRIG_SOAPY_MODULE_DIR}")

  # The module: found by SoapySDR through SOAPY_SDR_PLUGIN_PATH=build/soapy-modules
  # (hostlib's soapy driver sets it), or installed with `cmake --install`.
  # The module's files as SoapyRTLSDR splits a device (soapy/hilrig_soapy.hpp); the
  # sanitizer test (CMakeLists.txt, hilrig_soapy_asan) builds the same list.
  set(HILRIG_SOAPY_MODULE_SOURCES soapy/settings.cpp soapy/streaming.cpp soapy/registration.cpp
    soapy/soapy_simproc.cpp)
  add_library(hilrigSupport MODULE ${HILRIG_SOAPY_MODULE_SOURCES})
  target_link_libraries(hilrigSupport PRIVATE hilrig::core SoapySDR)
  target_compile_definitions(hilrigSupport PRIVATE HILRIG_DEFAULT_SIM_BIN="$<TARGET_FILE:hilrig-sim>")
  set_target_properties(hilrigSupport PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${HILRIG_SOAPY_MODULE_DIR}
    CXX_VISIBILITY_PRESET hidden)
  add_dependencies(hilrigSupport hilrig-sim)
  install(TARGETS hilrigSupport DESTINATION lib${LIB_SUFFIX}/SoapySDR/modules${SoapySDR_ABI_VERSION} COMPONENT soapy)
  # The wheel carries it too: hostlib/soapy_modules/, put on SOAPY_SDR_PLUGIN_PATH by hostlib's soapy driver.
  install(TARGETS hilrigSupport LIBRARY DESTINATION hostlib/soapy_modules COMPONENT python)
else()
  message(STATUS "hilrig: SoapySDR not found (apt-get install libsoapysdr-dev): "
                 "building without the soapy driver and the driver=hilrig module")
endif()

find_package(UHD CONFIG QUIET)
if(UHD_FOUND)
  message(STATUS "hilrig: UHD ${UHD_VERSION} found: uhd driver")
  target_sources(_native PRIVATE radio/uhd_driver.cpp)
  target_include_directories(_native PRIVATE ${UHD_INCLUDE_DIRS})
  target_link_libraries(_native PRIVATE ${UHD_LIBRARIES})
  target_compile_definitions(_native PRIVATE HILRIG_HAVE_UHD=1)
else()
  message(STATUS "hilrig: UHD not found (apt-get install libuhd-dev): building without the uhd driver")
endif()

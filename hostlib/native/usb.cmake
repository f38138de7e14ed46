# USB transport (docs/usb.md): the engine and the bus model are in hilrig::core; the
# libusb-1.0 backend is its own static library (hilrig_usb_libusb), linked by
# hostlib._native and the umockdev tests, so hilrig::core itself needs no libusb.
find_package(PkgConfig REQUIRED)
pkg_check_modules(LIBUSB REQUIRED IMPORTED_TARGET libusb-1.0)

add_library(hilrig_usb_libusb STATIC usb/usb_libusb.cpp)
set_target_properties(hilrig_usb_libusb PROPERTIES POSITION_INDEPENDENT_CODE ON)
target_link_libraries(hilrig_usb_libusb PUBLIC hilrig::core PRIVATE PkgConfig::LIBUSB)
target_sources(_native PRIVATE python/usb.cpp)
target_link_libraries(_native PRIVATE hilrig_usb_libusb)

if(HILRIG_BUILD_TESTS)
  find_package(GTest)
endif()
if(HILRIG_BUILD_TESTS AND GTest_FOUND)
  include(GoogleTest)
  add_executable(hilrig_usb_model_tests tests/test_usb_bus_model.cpp tests/test_usb_geometry.cpp
    tests/test_usb_model_backend.cpp tests/test_usb_sim_channel.cpp tests/test_usb_frame_source.cpp)
  target_link_libraries(hilrig_usb_model_tests PRIVATE hilrig::core GTest::gtest_main)
  gtest_discover_tests(hilrig_usb_model_tests TEST_PREFIX usb.)

  # libusb against a device emulated by umockdev in the test process: the ioctls of
  # usbfs reach it through umockdev's preload library (as in libusb's own tests).
  pkg_check_modules(UMOCKDEV REQUIRED IMPORTED_TARGET umockdev-1.0)
  add_executable(hilrig_usb_umockdev_tests tests/test_usb_umockdev.cpp)
  target_link_libraries(hilrig_usb_umockdev_tests PRIVATE hilrig_usb_libusb PkgConfig::UMOCKDEV GTest::gtest_main)
  gtest_discover_tests(hilrig_usb_umockdev_tests TEST_PREFIX usb.umockdev.
    PROPERTIES ENVIRONMENT "LD_PRELOAD=libumockdev-preload.so.0" TIMEOUT 60)
endif()

if(HILRIG_BUILD_TESTS)
  # The same emulated board as a Python module for hostlib/tests/test_usb_umockdev.py
  # (the usb driver end to end); it stays in the build tree.
  pkg_check_modules(UMOCKDEV_PY IMPORTED_TARGET umockdev-1.0)
  if(UMOCKDEV_PY_FOUND)
    pybind11_add_module(_usb_mock tests/usb_mock_module.cpp)
    target_link_libraries(_usb_mock PRIVATE hilrig::core PkgConfig::UMOCKDEV_PY)
    set_target_properties(_usb_mock PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/test-modules)
  endif()
endif()

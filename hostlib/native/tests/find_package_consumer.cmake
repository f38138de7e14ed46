# ctest core.find_package_consumer: stage the core's install (component "core") in a
# fresh prefix, build tests/consumer against it with find_package(hilrig), run it.
# -D: BUILD_DIR (the core's build tree), WORK_DIR, CONSUMER_SRC, GENERATOR, CXX.
file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "${what}: ok\n${out}")
endfunction()

run("cmake --install (component core)" "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}" --component core)
foreach(f include/hilrig/core/frame.hpp lib/cmake/hilrig/hilrigConfig.cmake lib/cmake/hilrig/hilrigConfigVersion.cmake)
  if(NOT EXISTS "${prefix}/${f}")
    message(FATAL_ERROR "the staged install lacks ${f}")
  endif()
endforeach()
run("configure the consumer" "${CMAKE_COMMAND}" -S "${CONSUMER_SRC}" -B "${WORK_DIR}/build" -G "${GENERATOR}"
    "-DCMAKE_CXX_COMPILER=${CXX}" "-DCMAKE_PREFIX_PATH=${prefix}" "-DHILRIG_EXPECTED_PREFIX=${prefix}"
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
run("build the consumer" "${CMAKE_COMMAND}" --build "${WORK_DIR}/build")
run("run the consumer" "${WORK_DIR}/build/hilrig_consumer")

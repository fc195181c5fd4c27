# cmake -DSOURCE_DIR=<tests/consumer> -DBINARY_DIR=<spmdsim build> -DWORK_DIR=<scratch> [-DCONFIG=..]
#       [-DGENERATOR=..] [-DCXX_COMPILER=..] -P run_consumer.cmake
# Installs the spmdsim build into WORK_DIR/prefix, builds the consumer project against it with
# CMAKE_PREFIX_PATH and runs it. Starts from an empty WORK_DIR so nothing stale is picked up.
cmake_minimum_required(VERSION 3.25)
foreach(var SOURCE_DIR BINARY_DIR WORK_DIR)
  if(NOT ${var})
    message(FATAL_ERROR "run_consumer.cmake: -D${var}=... is required")
  endif()
endforeach()

set(prefix ${WORK_DIR}/prefix)
set(build ${WORK_DIR}/build)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

function(run step)
  message(STATUS "consumer: ${step}: ${ARGN}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer: ${step} failed (${rc})")
  endif()
endfunction()

set(config_args "")
if(CONFIG)
  set(config_args --config ${CONFIG})
endif()
run(install ${CMAKE_COMMAND} --install ${BINARY_DIR} --prefix ${prefix} ${config_args})

set(configure_args -S ${SOURCE_DIR} -B ${build} -DCMAKE_PREFIX_PATH=${prefix})
if(GENERATOR)
  list(APPEND configure_args -G ${GENERATOR})
endif()
if(CXX_COMPILER)
  list(APPEND configure_args -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
endif()
if(CONFIG)
  list(APPEND configure_args -DCMAKE_BUILD_TYPE=${CONFIG})
endif()
run(configure ${CMAKE_COMMAND} ${configure_args})

# The package must come from the prefix just installed, not from anywhere else on the machine.
file(STRINGS ${build}/CMakeCache.txt found_dir REGEX "^spmdsim_DIR:")
string(REGEX REPLACE "^spmdsim_DIR:[A-Z]+=" "" found_dir "${found_dir}")
file(REAL_PATH "${found_dir}" found_dir)
file(REAL_PATH "${prefix}" real_prefix)
string(FIND "${found_dir}" "${real_prefix}/" at)
if(NOT at EQUAL 0)
  message(FATAL_ERROR "consumer: found spmdsim in ${found_dir}, not in the test prefix ${real_prefix}")
endif()

run(build ${CMAKE_COMMAND} --build ${build} ${config_args})

find_program(consumer_exe consumer PATHS ${build} ${build}/${CONFIG} NO_DEFAULT_PATH REQUIRED)
run(run ${consumer_exe})

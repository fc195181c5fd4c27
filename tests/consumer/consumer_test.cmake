# Included from tests/CMakeLists.txt: the consumer_project test installs this build into a prefix inside the
# build tree, then configures, builds and runs tests/consumer/ (an outside project) against it. It needs
# only a complete build, so it does not depend on any other test.
add_test(NAME consumer_project
         COMMAND ${CMAKE_COMMAND}
                 -DSOURCE_DIR=${CMAKE_CURRENT_LIST_DIR}
                 -DBINARY_DIR=${PROJECT_BINARY_DIR}
                 -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/consumer
                 -DCONFIG=$<CONFIG>
                 -DGENERATOR=${CMAKE_GENERATOR}
                 -DCXX_COMPILER=${CMAKE_CXX_COMPILER}
                 -P ${CMAKE_CURRENT_LIST_DIR}/run_consumer.cmake)
# COST: a first run (no timing history yet) starts this slow test first, beside the fast suites.
set_tests_properties(consumer_project PROPERTIES TIMEOUT 300 COST 1000 LABELS "install")

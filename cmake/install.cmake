# `cmake --install`: the `loadplan` binary, the libraries, their headers (under
# include/loadplan, the root they include each other from) and a CMake package:
#   find_package(loadplan REQUIRED)   target_link_libraries(app PRIVATE loadplan::loadplan)
# with `#include "api/loadplan.h"` (docs/api.md). The renderers (Graphviz), CLI11 and the test
# machinery are not part of the package.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

get_property(loadplan_libraries GLOBAL PROPERTY LOADPLAN_LIBRARIES)
if(TARGET loadplan_api)
  add_library(loadplan_package INTERFACE)
  set_target_properties(loadplan_package PROPERTIES EXPORT_NAME loadplan)
  target_link_libraries(loadplan_package INTERFACE loadplan_api)
  add_library(loadplan::loadplan ALIAS loadplan_package)

  install(TARGETS loadplan_package ${loadplan_libraries} EXPORT loadplanTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  foreach(dir base expr verifier builders simulator kernels backend api examples)
    install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/loadplan
            FILES_MATCHING PATTERN "*.h")
  endforeach()
  install(EXPORT loadplanTargets NAMESPACE loadplan:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/loadplan)
  configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/loadplanConfig.cmake.in
                                ${PROJECT_BINARY_DIR}/loadplanConfig.cmake
                                INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/loadplan)
  write_basic_package_version_file(${PROJECT_BINARY_DIR}/loadplanConfigVersion.cmake
                                   COMPATIBILITY SameMinorVersion)
  install(FILES ${PROJECT_BINARY_DIR}/loadplanConfig.cmake ${PROJECT_BINARY_DIR}/loadplanConfigVersion.cmake
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/loadplan)
endif()
if(TARGET loadplan)
  install(TARGETS loadplan RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

# NormLab's version (project()) and the commit it is built from, for `--version` and run folders.
# The commit is read at every build, not only at configure time, so a binary never names an older commit;
# the generated file is rewritten only when its text changes, so an unchanged commit rebuilds nothing.
set(NORMLAB_VERSION_SOURCE "${CMAKE_BINARY_DIR}/generated/normlab_version.cpp")
add_custom_target(normlab_version_source
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR} -DOUTPUT=${NORMLAB_VERSION_SOURCE}
          -DVERSION=${PROJECT_VERSION} -DCOMMIT_OVERRIDE=${NORMLAB_COMMIT}
          -P ${PROJECT_SOURCE_DIR}/cmake/write_version.cmake
  BYPRODUCTS ${NORMLAB_VERSION_SOURCE}
  COMMENT "NormLab: reading the commit for --version")

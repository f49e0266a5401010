# Read by cpack before it packs (CPACK_PROJECT_CONFIG_FILE): refuses a .deb that could not name what
# it needs to run (cmake/normlab_install.cmake sets CPACK_NORMLAB_REFUSAL and says why).
if(CPACK_GENERATOR STREQUAL "DEB" AND CPACK_NORMLAB_REFUSAL)
  message(FATAL_ERROR "NormLab: no .deb from this build: ${CPACK_NORMLAB_REFUSAL}")
endif()

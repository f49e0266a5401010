# `cmake --install` and `cpack -G DEB`: the two programs, the shipped corpus, and what makes NormLab a
# desktop app (a .desktop entry, the icon as SVG plus PNG sizes rendered from it, AppStream metainfo).
# The .deb's dependencies are computed from the binaries (dpkg-shlibdeps), so they name Debian's runtime
# packages (Qt, libgomp) and never the -dev packages the build needs.
include(GNUInstallDirs)
set(NORMLAB_APP_ID org.normlab.NormLab)
set(NORMLAB_DESKTOP_DIR "${PROJECT_SOURCE_DIR}/resources/desktop")
set(NORMLAB_ICON_SIZES 16 24 32 48 64 128 256 512)

install(TARGETS normlab-cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES "${PROJECT_SOURCE_DIR}/resources/corpus.txt" DESTINATION ${CMAKE_INSTALL_DATADIR}/normlab)
install(DIRECTORY "${PROJECT_SOURCE_DIR}/resources/sweeps" DESTINATION ${CMAKE_INSTALL_DATADIR}/normlab
        FILES_MATCHING PATTERN "*.json")

if(NORMLAB_GUI)
  install(TARGETS normlab RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  # Recorded lessons (scripts/record_lessons.sh), packed: File > Replay recorded lesson.
  if(EXISTS "${PROJECT_SOURCE_DIR}/resources/recordings")
    install(DIRECTORY "${PROJECT_SOURCE_DIR}/resources/recordings" DESTINATION ${CMAKE_INSTALL_DATADIR}/normlab
            FILES_MATCHING PATTERN "*.tar.gz")
  endif()
  install(FILES "${NORMLAB_DESKTOP_DIR}/${NORMLAB_APP_ID}.desktop" DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
  configure_file("${NORMLAB_DESKTOP_DIR}/${NORMLAB_APP_ID}.metainfo.xml.in"
                 "${CMAKE_BINARY_DIR}/desktop/${NORMLAB_APP_ID}.metainfo.xml" @ONLY)
  install(FILES "${CMAKE_BINARY_DIR}/desktop/${NORMLAB_APP_ID}.metainfo.xml" DESTINATION ${CMAKE_INSTALL_DATADIR}/metainfo)
  install(FILES "${NORMLAB_DESKTOP_DIR}/${NORMLAB_APP_ID}.svg"
          DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)
  # Every PNG size from the one SVG, rendered at build time by a small Qt tool.
  add_executable(normlab-render-icon "${PROJECT_SOURCE_DIR}/app/desktop/render_icon.cpp")
  target_link_libraries(normlab-render-icon PRIVATE Qt6::Gui Qt6::Svg)
  set(icon_pngs)
  foreach(size ${NORMLAB_ICON_SIZES})
    set(png "${CMAKE_BINARY_DIR}/desktop/icons/${size}x${size}/${NORMLAB_APP_ID}.png")
    add_custom_command(OUTPUT "${png}"
      COMMAND ${CMAKE_COMMAND} -E make_directory "${CMAKE_BINARY_DIR}/desktop/icons/${size}x${size}"
      COMMAND normlab-render-icon "${NORMLAB_DESKTOP_DIR}/${NORMLAB_APP_ID}.svg" "${png}" ${size}
      DEPENDS normlab-render-icon "${NORMLAB_DESKTOP_DIR}/${NORMLAB_APP_ID}.svg"
      COMMENT "NormLab: icon ${size}x${size}")
    install(FILES "${png}" DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/${size}x${size}/apps)
    list(APPEND icon_pngs "${png}")
  endforeach()
  add_custom_target(normlab_icons ALL DEPENDS ${icon_pngs})
endif()

# The Debian package: `cpack -G DEB` in the build folder (scripts/package.sh makes a portable build).
set(CPACK_PACKAGE_NAME normlab)
set(CPACK_PACKAGE_VENDOR NormLab)
set(CPACK_PACKAGE_CONTACT "NormLab developers <normlab@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_DESCRIPTION
    "NormLab trains small Transformers while you switch norm placement, norm type, warmup and residual\n"
    "schemes live, and shows per-block gradient and activation norms. Includes the desktop app (normlab)\n"
    "and the command-line tool (normlab-cli).")
string(REPLACE ";" "" CPACK_PACKAGE_DESCRIPTION "${CPACK_PACKAGE_DESCRIPTION}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES ON)
if(NORMLAB_GUI)
  # Loaded as plugins, so dpkg-shlibdeps cannot see them: the window's platform plugins (xcb, offscreen,
  # wayland) and a font for Qt to draw text with.
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "qt6-qpa-plugins, fonts-dejavu-core")
endif()
# A CUDA build needs the CUDA runtime and cuBLAS, which dpkg-shlibdeps names only when a Debian package
# owns them (Debian's nvidia-cuda-toolkit); a toolkit installed otherwise (NVIDIA's runfile in
# /usr/local/cuda) would give a package that installs and then cannot start, so cpack refuses it.
if(NORMLAB_CUDA)
  set(unpackaged)
  foreach(library CUDA::cudart CUDA::cublas CUDA::cublasLt)
    get_target_property(location ${library} IMPORTED_LOCATION)
    file(REAL_PATH "${location}" location)
    execute_process(COMMAND dpkg -S "${location}" RESULT_VARIABLE owned OUTPUT_QUIET ERROR_QUIET)
    if(NOT owned EQUAL 0)
      list(APPEND unpackaged "${location}")
    endif()
  endforeach()
  if(unpackaged)
    string(REPLACE ";" ", " unpackaged "${unpackaged}")
    string(CONCAT CPACK_NORMLAB_REFUSAL "the CUDA libraries " "${unpackaged}" " belong to no Debian "
           "package, so the .deb could not depend on them: package a CPU build (scripts/package.sh does, "
           "-DNORMLAB_CUDA=OFF) or build against Debian's nvidia-cuda-toolkit")
  endif()
endif()
set(CPACK_PROJECT_CONFIG_FILE "${PROJECT_SOURCE_DIR}/cmake/normlab_cpack_check.cmake")
include(CPack)

# Finds the Qt 6 parts the desktop app needs, one at a time, and stops the configure on the first one
# missing with the Debian package that provides it (Qt 6.4's Charts needs OpenGL's development files).
# Leaving the app out is an explicit choice: -DNORMLAB_GUI=OFF.

# Each Qt component the app and its tests use, with the Debian package that provides it, in the order
# their dependencies need them.
set(NORMLAB_QT_PARTS
  "Core:qt6-base-dev" "Gui:qt6-base-dev" "Widgets:qt6-base-dev" "Test:qt6-base-dev"
  "OpenGL:libqt6opengl6-dev" "OpenGLWidgets:libqt6opengl6-dev"
  "Charts:qt6-charts-dev" "Svg:qt6-svg-dev")

macro(normlab_find_qt)
  foreach(part ${NORMLAB_QT_PARTS})
    string(REPLACE ":" ";" part_and_package "${part}")
    list(GET part_and_package 0 component)
    list(GET part_and_package 1 package)
    find_package(Qt6 QUIET COMPONENTS ${component})
    if(NOT Qt6${component}_FOUND)
      message(FATAL_ERROR "NormLab: Qt 6 ${component} not found: install the Debian package ${package} "
                          "(scripts/setup_common.sh installs every package the build needs), or configure "
                          "with -DNORMLAB_GUI=OFF to build without the desktop app")
    endif()
  endforeach()
  message(STATUS "NormLab: desktop app on (Qt ${Qt6_VERSION}: Widgets, Charts, Svg)")
endmacro()

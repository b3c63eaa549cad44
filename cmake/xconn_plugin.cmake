# xconn_add_plugin(<plugin_id> SOURCES ... [VERSION x.y.z] [OUTPUT_DIR dir] [TARGET name])
# Builds one plugin as <plugin_id>.so with hidden symbols and its build facts stamped in. TARGET names the CMake
# target (default xconn_plugin_<plugin_id>), so a test can build other builds of one plugin id.
set(XCONN_PLUGIN_EXPORTS_MAP ${CMAKE_CURRENT_LIST_DIR}/xconn_plugin.map)

function(xconn_add_plugin plugin_id)
  cmake_parse_arguments(ARG "" "VERSION;OUTPUT_DIR;TARGET" "SOURCES" ${ARGN})
  if(NOT ARG_VERSION)
    set(ARG_VERSION ${PROJECT_VERSION})
  endif()
  if(NOT ARG_OUTPUT_DIR)
    set(ARG_OUTPUT_DIR ${XCONN_PLUGIN_OUTPUT_DIR})
  endif()
  set(target xconn_plugin_${plugin_id})
  if(ARG_TARGET)
    set(target ${ARG_TARGET})
  endif()
  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE xconn::plugin_api)
  # The build facts go into a generated header (rewritten only when they change), not into the flags, so
  # a reconfigure does not rebuild everything.
  set(build_header ${CMAKE_CURRENT_BINARY_DIR}/xconn_build_${target}.h)
  file(CONFIGURE OUTPUT ${build_header} CONTENT
"#define XCONN_PLUGIN_BUILD_VERSION \"${ARG_VERSION}\"
#define XCONN_PLUGIN_BUILD_GIT_TAG \"${XCONN_GIT_TAG}\"
#define XCONN_PLUGIN_BUILD_GIT_REV \"${XCONN_GIT_REV}\"
#define XCONN_PLUGIN_BUILD_TIME \"${XCONN_BUILD_TIME}\"
")
  target_compile_options(${target} PRIVATE -include ${build_header})
  set_target_properties(${target} PROPERTIES
    PREFIX "" OUTPUT_NAME ${plugin_id}
    LIBRARY_OUTPUT_DIRECTORY ${ARG_OUTPUT_DIR}
    CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  # Only the entry symbol leaves the library: a Boost or std copy compiled in stays private, so the host's
  # copy never interposes and no STB_GNU_UNIQUE symbol pins the library in memory.
  target_link_options(${target} PRIVATE -Wl,--version-script=${XCONN_PLUGIN_EXPORTS_MAP})
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${XCONN_PLUGIN_EXPORTS_MAP})
endfunction()

# GCC 12 at -O3 reports overflows that cannot happen in inlined std::string concatenation (GCC bugs 105329,
# 105651); GCC 13 does not. Applied only where it was seen.
function(xconn_quiet_gcc12_string_warnings)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    foreach(target ${ARGN})
      target_compile_options(${target} PRIVATE -Wno-stringop-overflow -Wno-stringop-overread -Wno-array-bounds)
    endforeach()
  endif()
endfunction()

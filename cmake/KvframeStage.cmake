# kvframe_add_stage(NAME SOURCES ... [PUBLIC_DEPS ...] [PRIVATE_DEPS ...]): one
# pipeline stage = one library target kvframe::NAME, public headers in
# include/kvframe/NAME/, warnings on.
function(kvframe_add_stage name)
  kvframe_library(${name} $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> ${ARGN})
endfunction()

# kvframe_add_example(NAME SOURCES ... [PUBLIC_DEPS ...] [PRIVATE_DEPS ...]): a
# sample game's library kvframe::NAME, its headers under examples/, warnings on.
function(kvframe_add_example name)
  kvframe_library(${name} ${PROJECT_SOURCE_DIR}/examples ${ARGN})
endfunction()

# What both share: library kvframe_NAME, alias kvframe::NAME, INCLUDE_DIR public.
function(kvframe_library name include_dir)
  cmake_parse_arguments(ARG "" "" "SOURCES;PUBLIC_DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(kvframe_${name} ${ARG_SOURCES})
  add_library(kvframe::${name} ALIAS kvframe_${name})
  target_include_directories(kvframe_${name} PUBLIC ${include_dir})
  target_link_libraries(kvframe_${name} PUBLIC ${ARG_PUBLIC_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  kvframe_warnings(kvframe_${name})
endfunction()

# -Wsubobject-linkage off in unity builds: GCC warns of a class with a field
# of an anonymous-namespace type unless the class is in the main file, and in a
# unity build no source is (the batch file includes them).
function(kvframe_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
    -Wno-sign-conversion $<$<AND:$<BOOL:${CMAKE_UNITY_BUILD}>,$<COMPILE_LANG_AND_ID:CXX,GNU>>:-Wno-subobject-linkage>)
endfunction()

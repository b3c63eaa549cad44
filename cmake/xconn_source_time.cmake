# xconn_source_time(<out_var> <source_dir>)
# The build time stamped into the binaries (YYMMDDhhmm, UTC), taken from the source rather than the clock so that a
# build is a function of its source: a reconfigure with nothing changed rebuilds nothing, and two builds of one commit
# give the same plugin files. It is SOURCE_DATE_EPOCH when set, else the committer time of <source_dir>'s HEAD; a tree
# without git gets a fixed 0000000000.
function(xconn_source_time out_var source_dir)
  set(epoch "$ENV{SOURCE_DATE_EPOCH}")
  if(NOT epoch)
    find_program(xconn_git_program git)
    if(xconn_git_program)
      execute_process(COMMAND ${xconn_git_program} log -1 --format=%ct WORKING_DIRECTORY ${source_dir}
                      OUTPUT_VARIABLE epoch OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    endif()
  endif()
  if(NOT epoch MATCHES "^[0-9]+$")
    set(${out_var} "0000000000" PARENT_SCOPE)
    return()
  endif()
  # string(TIMESTAMP) formats SOURCE_DATE_EPOCH when it is set: set for that one call, then put back.
  set(saved "$ENV{SOURCE_DATE_EPOCH}")
  set(ENV{SOURCE_DATE_EPOCH} ${epoch})
  string(TIMESTAMP stamp "%y%m%d%H%M" UTC)
  set(ENV{SOURCE_DATE_EPOCH} "${saved}")
  set(${out_var} ${stamp} PARENT_SCOPE)
endfunction()

# The Debian package (tools/package.sh runs `cpack -G DEB`; tests/package/ checks what it makes).
# Everything the package holds is installed here, from the top directory, so the targets' own CMakeLists stay
# free of packaging. Paths inside the package:
#   /usr/bin/xconnd, /usr/bin/xconnctl                 the daemon and its command-line client (Python 3)
#   /usr/lib/xconn/plugins/<id>.so                      the plugins that ship (plugins.dir of the packaged config)
#   /etc/xconn/xconnd.yaml                              the packaged configuration (a conffile)
#   /lib/systemd/system/xconnd.service, xconnd@.service the units (deploy/systemd)
#   /usr/share/doc/xconn/{copyright,changelog.Debian.gz}, /usr/share/man/man8/xconnd.8.gz,
#   /usr/share/lintian/overrides/xconn
# /var/lib/xconn and the system user xconn are made by the maintainer scripts (deploy/debian/postinst).
# `cmake --install` outside CPack is not what this is for: /etc and /lib/systemd are absolute destinations.

set(XCONN_PACKAGED_PLUGINS echo telegram irc webhook wechat)
set(xconn_deploy ${PROJECT_SOURCE_DIR}/deploy)
set(xconn_pkg_gen ${CMAKE_BINARY_DIR}/package)

# Programs go through install(TARGETS) (also for targets defined in other folders, CMake >= 3.13): CPack then
# strips them (CPACK_STRIP_FILES) and drops any build-tree RUNPATH, which install(FILES) would not.
install(TARGETS xconnd RUNTIME DESTINATION bin)
foreach(plugin IN LISTS XCONN_PACKAGED_PLUGINS)
  install(TARGETS xconn_plugin_${plugin} LIBRARY DESTINATION lib/xconn/plugins)
endforeach()
install(PROGRAMS ${PROJECT_SOURCE_DIR}/tools/xconnctl/xconnctl DESTINATION bin)

install(FILES ${xconn_deploy}/debian/xconnd.yaml DESTINATION /etc/xconn)
install(FILES ${xconn_deploy}/systemd/xconnd.service ${xconn_deploy}/systemd/xconnd@.service
        DESTINATION /lib/systemd/system)
install(FILES ${xconn_deploy}/debian/copyright DESTINATION share/doc/xconn)
install(FILES ${xconn_deploy}/debian/lintian-overrides DESTINATION share/lintian/overrides RENAME xconn)

# Debian wants the changelog and man pages compressed with gzip -9n (no name, no time stamp: reproducible);
# done at configure time, and an edit of either source re-runs the configure.
find_program(XCONN_GZIP gzip REQUIRED)
file(MAKE_DIRECTORY ${xconn_pkg_gen})
foreach(pair IN ITEMS changelog.Debian:debian/changelog xconnd.8:debian/xconnd.8)
  string(REPLACE ":" ";" pair "${pair}")
  list(GET pair 0 name)
  list(GET pair 1 source)
  execute_process(COMMAND ${XCONN_GZIP} -9nc ${xconn_deploy}/${source} OUTPUT_FILE ${xconn_pkg_gen}/${name}.gz
                  COMMAND_ERROR_IS_FATAL ANY)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${xconn_deploy}/${source})
endforeach()
install(FILES ${xconn_pkg_gen}/changelog.Debian.gz DESTINATION share/doc/xconn)
install(FILES ${xconn_pkg_gen}/xconnd.8.gz DESTINATION share/man/man8)

# The Debian revision is the changelog's: its first line must name this version (tests/package checks it too).
set(XCONN_DEB_RELEASE 1)
file(STRINGS ${xconn_deploy}/debian/changelog xconn_changelog_top LIMIT_COUNT 1)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${xconn_deploy}/debian/changelog)
if(NOT xconn_changelog_top MATCHES "^xconn \\(${PROJECT_VERSION}-${XCONN_DEB_RELEASE}\\) ")
  message(WARNING "deploy/debian/changelog does not start with an entry for ${PROJECT_VERSION}-${XCONN_DEB_RELEASE}: "
                  "add one before packaging")
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME xconn)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "xconn")
set(CPACK_PACKAGE_CONTACT "Seed 7aeb8b51 maintainers <maintainers@users.noreply.a-seed-7aeb8b51.example>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "connector server for the xAgent Connector Protocol")
# Lines of at most 79 characters (lintian: extended-description-line-too-long).
set(CPACK_PACKAGE_DESCRIPTION
    "xconnd hosts many target-system adapters (plugins, one shared object each)
in one process and serves each of them to xAgent under its own base URL.
The package ships the echo, Telegram, IRC and webhook plugins, the
command-line client xconnctl and a hardened systemd service (xconnd.service,
and xconnd@.service for more instances).")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS
    OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
set(CPACK_DEBIAN_PACKAGE_NAME xconn)
set(CPACK_DEBIAN_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_DEBIAN_PACKAGE_RELEASE ${XCONN_DEB_RELEASE})
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)
# The libraries come from dpkg-shlibdeps; xconnctl needs python3, postinst adduser, the units' ExecReload
# /bin/kill (procps: not in a minimal system).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "python3, adduser, procps")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${xconn_deploy}/debian/conffiles ${xconn_deploy}/debian/postinst ${xconn_deploy}/debian/prerm
    ${xconn_deploy}/debian/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)

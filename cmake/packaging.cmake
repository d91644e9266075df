# Install rules and the Debian package. `cmake --install BUILD [--prefix P]` installs:
#   bin/strata                                   the tool
#   lib/strata/libstrata_nccl_profiler.so        NCCL's profiler plugin (strata record finds it at ../lib/strata)
#   share/man/man1/strata.1.gz                   man page, generated from the binary's --help
#   share/bash-completion/completions/strata     completion (reads --help at completion time)
#   lib/systemd/system/strata-{agent,serve}.service  the agent's and serve's units, ExecStart naming the binary
#   the Python package strata/ (__init__.py, _strata*.so) in the system Python's path: under /usr (the .deb)
#     lib/python3/dist-packages, Debian's place for the system's modules; under any other prefix
#     lib/python3.X/dist-packages, which Debian's python3 reads under /usr/local (STRATA_PYTHON)
# `cpack -G DEB` (from the build directory) makes strata_<version>_<arch>.deb of the same files under /usr,
# its dependencies found by dpkg-shlibdeps.
include(GNUInstallDirs)

install(TARGETS strata RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS strata_nccl_profiler LIBRARY DESTINATION lib/strata)

add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/strata.1.gz
  COMMAND ${CMAKE_SOURCE_DIR}/packaging/gen_manpage.sh $<TARGET_FILE:strata> > ${CMAKE_BINARY_DIR}/strata.1
  COMMAND gzip -9nf ${CMAKE_BINARY_DIR}/strata.1
  DEPENDS strata ${CMAKE_SOURCE_DIR}/packaging/gen_manpage.sh
  COMMENT "Generating the man page from strata --help")
add_custom_target(strata_manpage ALL DEPENDS ${CMAKE_BINARY_DIR}/strata.1.gz)
install(FILES ${CMAKE_BINARY_DIR}/strata.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${CMAKE_SOURCE_DIR}/packaging/strata.bash-completion
  DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME strata)

# The units name the binary where this install puts it (the prefix is known only at install time).
foreach(unit strata-agent strata-serve)
  install(CODE "
    set(STRATA_INSTALLED_BINARY \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/strata\")
    configure_file(\"${CMAKE_SOURCE_DIR}/packaging/${unit}.service.in\"
                   \"${CMAKE_BINARY_DIR}/${unit}.service\" @ONLY)
  ")
  install(FILES ${CMAKE_BINARY_DIR}/${unit}.service DESTINATION lib/systemd/system)
endforeach()

# The Python package: its directory depends on the prefix, known only at install time.
if(STRATA_PYTHON)
  install(CODE "
    if(CMAKE_INSTALL_PREFIX STREQUAL \"/usr\")
      set(strata_python_dir lib/python3/dist-packages)
    else()
      set(strata_python_dir lib/python${Python_VERSION_MAJOR}.${Python_VERSION_MINOR}/dist-packages)
    endif()
    file(INSTALL \"${STRATA_PYTHON_DIR}\" DESTINATION \"\${CMAKE_INSTALL_PREFIX}/\${strata_python_dir}\"
         FILES_MATCHING PATTERN \"*.py\" PATTERN \"_strata*.so\" PATTERN \"__pycache__\" EXCLUDE)
  ")
  # The module runs on the Python minor version it was built for, its DataFrames need pandas: recommended, so
  # that the tool alone installs without Python.
  math(EXPR strata_python_next_minor "${Python_VERSION_MINOR} + 1")
  set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3 (>= ${Python_VERSION_MAJOR}.${Python_VERSION_MINOR}~), \
python3 (<< ${Python_VERSION_MAJOR}.${strata_python_next_minor}), python3-pandas")
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME strata)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "finds which worker of a distributed training job is slow, which operation, why, and what fixing it saves")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "strata maintainers <maintainers@strata.invalid>")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES ON)
include(CPack)

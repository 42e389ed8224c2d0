# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""Build glue of the dlcp package (the metadata is in pyproject.toml).

What setuptools alone cannot do:

- the version is the one of the tree's VERSION file (also the module's,
  the library's and the Debian packages'), written into dlcp/_build.py
  with the package;
- the package carries its own libdlcp: userspace/lib's sources (the list
  of userspace/lib/sources.mk) are compiled into dlcp/libdlcp.so.0, which
  dlcp/__init__.py loads before any other. The wheel is then one of this
  platform (py3-none-linux_x86_64 and the like: ctypes, no Python ABI).
  An editable install (pip install -e) builds the tree's library instead
  (make -C userspace/lib), which the tree's package loads.

The C sources are found in the source tree around this directory
(pip install ./userspace/python builds in place), or in the _libdlcp/
directory that this setup.py's sdist adds. DLCP_SYSTEM_LIBDLCP=1 builds a
pure package without a library of its own, which loads the system's
libdlcp.so.0 (the Debian package python3-dlcp, with libdlcp0). CC, CFLAGS
and LDFLAGS are honoured.
"""
import os
import shlex
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))
LIB_REL = os.path.join("userspace", "lib")
# what the library's build needs, relative to the top of the tree
TREE_FILES = ["VERSION", os.path.join("uapi", "linux", "dlcp.h"),
              os.path.join(LIB_REL, "sources.mk"), os.path.join(LIB_REL, "libdlcp.map")]
SONAME = "libdlcp.so.0"


def bundle_lib():
    """Does the package carry its own libdlcp (DLCP_SYSTEM_LIBDLCP unset)?"""
    return os.environ.get("DLCP_SYSTEM_LIBDLCP", "") in ("", "0")


def tree_top():
    """The top of the tree with VERSION and the C sources: the source tree
    around this directory, else the copy an sdist carries."""
    for top in (os.path.join(HERE, "..", ".."), os.path.join(HERE, "_libdlcp")):
        if os.path.isfile(os.path.join(top, LIB_REL, "sources.mk")):
            return os.path.normpath(top)
    raise SystemExit("dlcp: no userspace/lib/sources.mk around %s: build the package from "
                     "the DLCP source tree (pip install ./userspace/python) or from its "
                     "sdist" % HERE)


def version():
    with open(os.path.join(tree_top(), "VERSION")) as f:
        return f.read().strip()


def make_var(path, name):
    """The words of `NAME := ...` (with continuation lines) in a makefile."""
    with open(path) as f:
        text = f.read().replace("\\\n", " ")
    for line in text.splitlines():
        lhs, sep, rhs = line.partition(":=")
        if sep and lhs.strip() == name:
            return rhs.split()
    raise SystemExit("dlcp: %s: no %s" % (path, name))


def lib_files(top):
    """The sources and headers of libdlcp, relative to @top."""
    mk = os.path.join(top, LIB_REL, "sources.mk")
    names = make_var(mk, "LIBDLCP_SRCS") + make_var(mk, "LIBDLCP_HDRS")
    return [os.path.join(LIB_REL, n) for n in names]


def build_libdlcp(top, tmp, out):
    """Compile libdlcp from @top's sources in @tmp into the shared library @out
    (soname libdlcp.so.0, the exports of libdlcp.map), the sources in
    parallel."""
    cc = shlex.split(os.environ.get("CC", "cc"))
    lib = os.path.join(top, LIB_REL)
    # without -Werror (the tree's Makefile has it): a warning that another
    # compiler adds must not fail an installation
    cflags = ["-std=c11", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-fPIC",
              "-I" + os.path.join(top, "uapi"), "-I" + lib]
    cflags += shlex.split(os.environ.get("CFLAGS", "-O2 -g"))
    srcs = make_var(os.path.join(lib, "sources.mk"), "LIBDLCP_SRCS")
    os.makedirs(tmp, exist_ok=True)
    objs = [os.path.join(tmp, s[:-2] + ".o") for s in srcs]

    def compile_one(i):
        cmd = cc + cflags + ["-c", "-o", objs[i], os.path.join(lib, srcs[i])]
        print(" ".join(cmd), flush=True)
        return subprocess.run(cmd).returncode

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as ex:
        if any(ex.map(compile_one, range(len(srcs)))):
            raise SystemExit("dlcp: compiling libdlcp failed")
    cmd = cc + shlex.split(os.environ.get("LDFLAGS", "")) + [
        "-shared", "-Wl,-soname," + SONAME,
        "-Wl,--version-script," + os.path.join(lib, "libdlcp.map"),
        "-o", out] + objs + ["-lpthread", "-lm"]
    print(" ".join(cmd), flush=True)
    if subprocess.run(cmd).returncode:
        raise SystemExit("dlcp: linking libdlcp failed")


class BuildPy(build_py):
    """build_py, plus dlcp/_build.py and (unless DLCP_SYSTEM_LIBDLCP=1)
    dlcp/libdlcp.so.0."""

    def run(self):
        super().run()
        top = tree_top()
        if getattr(self, "editable_mode", False):
            # pip install -e: the package is the tree's, which loads the
            # tree's library (dlcp/__init__.py) and reads its VERSION
            if bundle_lib() and subprocess.run(
                    ["make", "-C", os.path.join(top, LIB_REL), "libdlcp.so"]).returncode:
                raise SystemExit("dlcp: make -C userspace/lib libdlcp.so failed")
            return
        pkg = os.path.join(self.build_lib, "dlcp")
        with open(os.path.join(HERE, "dlcp", "_build.py.in")) as f:
            text = f.read()
        with open(os.path.join(pkg, "_build.py"), "w") as f:
            f.write(text.replace("@VERSION@", version()).replace('"@LIBDIR@"', "None"))
        if bundle_lib():
            tmp = os.path.join(self.get_finalized_command("build").build_temp, "libdlcp")
            build_libdlcp(top, tmp, os.path.join(pkg, SONAME))


class Sdist(sdist):
    """sdist, plus what the library's build needs from the rest of the tree,
    in _libdlcp/ with the tree's layout."""

    def make_release_tree(self, base_dir, files):
        super().make_release_tree(base_dir, files)
        top = tree_top()
        for rel in TREE_FILES + lib_files(top):
            dst = os.path.join(base_dir, "_libdlcp", rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy2(os.path.join(top, rel), dst)


class BinaryDistribution(Distribution):
    """A platform wheel when the package carries libdlcp."""

    def has_ext_modules(self):
        return bundle_lib()


cmdclass = {"build_py": BuildPy, "sdist": Sdist}
try:
    from wheel.bdist_wheel import bdist_wheel

    class BdistWheel(bdist_wheel):
        """py3-none-PLATFORM: the library is loaded by ctypes, so any
        Python 3 of the platform can use the wheel."""

        def get_tag(self):
            tag = super().get_tag()
            return ("py3", "none", tag[2]) if bundle_lib() else tag

    cmdclass["bdist_wheel"] = BdistWheel
except ImportError:     # no wheel package: setup.py install without wheels
    pass

setup(version=version(), cmdclass=cmdclass, distclass=BinaryDistribution)

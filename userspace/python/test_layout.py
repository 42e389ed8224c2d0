#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""The ctypes structures of the dlcp package against the C compiler's view
of libdlcp.h and <linux/dlcp.h>: the size of each, the offset and size of
each field. TAP on stdout, one line per structure.

    /usr/bin/python3 userspace/python/test_layout.py

A C program that prints sizeof() and offsetof() of the structures is
compiled with $CC (default cc) and run. Every ctypes.Structure of the
package must be listed in LAYOUTS, so that a new one gets checked too.
"""
import ctypes
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import dlcp  # noqa: E402

# class name -> (C type, {ctypes field: C member}); a member of None has no
# C counterpart (checked through the size of the whole), a field missing
# from the map has the C member's name.
LAYOUTS = {
    "SockaddrIn": ("struct sockaddr_in", {"family": "sin_family", "port": "sin_port",
                                          "addr": "sin_addr", "zero": "sin_zero"}),
    "SockaddrStorage": ("struct sockaddr_storage", {"family": "ss_family", "data": None}),
    "CollStats": ("struct dlcp_coll_stats", {}),
    "CollOpts": ("struct dlcp_coll_opts", {}),
    "Range": ("struct dlcp_range", {}),
    "TensorMeta": ("struct dlcp_tensor_meta", {}),
    "TensorInfo": ("struct dlcp_tensor_info", {}),
    "IoVec": ("struct iovec", {"base": "iov_base", "len": "iov_len"}),
    "QuantOpts": ("struct dlcp_quant_opts", {}),
}


def structures():
    """The ctypes.Structure classes the package defines, by name."""
    return {n: c for n, c in vars(dlcp).items()
            if isinstance(c, type) and issubclass(c, ctypes.Structure)
            and c.__module__.startswith("dlcp")}


def c_program(classes):
    lines = ["#include <stdio.h>", "#include <stddef.h>", "#include <sys/uio.h>",
             "#include <libdlcp.h>", "", "int main(void)", "{"]
    for name, (ctype, members) in sorted(LAYOUTS.items()):
        if name not in classes:
            continue
        lines.append('\tprintf("%s %%zu\\n", sizeof(%s));' % (name, ctype))
        for field, _ in classes[name]._fields_:
            m = members.get(field, field)
            if m is None:
                continue
            lines.append('\tprintf("%s.%s %%zu %%zu\\n", offsetof(%s, %s), '
                         'sizeof(((%s *)0)->%s));' % (name, field, ctype, m, ctype, m))
    lines += ["\treturn 0;", "}", ""]
    return "\n".join(lines)


def c_layouts(classes):
    """{'Name': size, 'Name.field': (offset, size)} as the compiler sees them."""
    with tempfile.TemporaryDirectory() as d:
        src, exe = os.path.join(d, "layout.c"), os.path.join(d, "layout")
        with open(src, "w") as f:
            f.write(c_program(classes))
        cc = os.environ.get("CC", "cc").split()
        subprocess.run(cc + ["-std=c11", "-D_GNU_SOURCE", "-Wall", "-Werror",
                             "-I" + os.path.join(TOP, "uapi"),
                             "-I" + os.path.join(TOP, "userspace", "lib"),
                             "-o", exe, src], check=True)
        out = subprocess.run([exe], check=True, capture_output=True, text=True).stdout
    res = {}
    for line in out.splitlines():
        key, *vals = line.split()
        res[key] = int(vals[0]) if len(vals) == 1 else (int(vals[0]), int(vals[1]))
    return res


def mismatches(name, cls, c):
    """What differs between ctypes' @cls and the C layouts @c, as text."""
    bad = []
    if ctypes.sizeof(cls) != c[name]:
        bad.append("sizeof: ctypes %d, C %d" % (ctypes.sizeof(cls), c[name]))
    for field, _ in cls._fields_:
        if "%s.%s" % (name, field) not in c:
            continue
        desc = getattr(cls, field)
        py = (desc.offset, desc.size)
        if py != c["%s.%s" % (name, field)]:
            bad.append("%s: ctypes offset %d size %d, C offset %d size %d"
                       % ((field,) + py + c["%s.%s" % (name, field)]))
    return bad


def main():
    classes = structures()
    c = c_layouts(classes)
    n = failed = 0
    print("TAP version 13")
    unlisted = sorted(set(classes) - set(LAYOUTS))
    missing = sorted(set(LAYOUTS) - set(classes))
    n += 1
    if unlisted or missing:
        failed += 1
        print("not ok %d - layout: every ctypes.Structure of dlcp is listed" % n)
        print("# not in LAYOUTS: %s; gone from dlcp: %s" % (unlisted, missing))
    else:
        print("ok %d - layout: every ctypes.Structure of dlcp is listed" % n)
    for name in sorted(set(classes) & set(LAYOUTS)):
        n += 1
        bad = mismatches(name, classes[name], c)
        what = "layout: dlcp.%s is %s (size, field offsets and sizes)" % (
            name, LAYOUTS[name][0])
        if bad:
            failed += 1
            print("not ok %d - %s" % (n, what))
            for b in bad:
                print("# " + b)
        else:
            print("ok %d - %s" % (n, what))
    print("1..%d" % n)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

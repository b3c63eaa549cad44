#!/usr/bin/env python3
"""Fails when a file of the repository refers to a path outside it.

A user's machine has only the repository: the build, the tests, the tools and the docs must not lean on a
folder beside it or on one machine's layout. Two kinds of reference are refused:
  - a relative path whose `..` segments climb above the repository root, resolved from the file's own
    folder (or from the root after ${CMAKE_SOURCE_DIR} and its kin);
  - an absolute path whose first folder is not a system one (/usr, /etc, /proc, /dev, /tmp, ...).
A line that must hold such text as data (say, a hostile input) says `path-check: allow`.

usage: outside_paths.py ROOT        check the repository at ROOT; exit 1 and list each reference found
       outside_paths.py --self-test plant references in a scratch tree and check that each is caught
"""
import os
import re
import subprocess
import sys
import tempfile

SYSTEM_ROOTS = {"usr", "etc", "proc", "dev", "tmp", "sys", "bin", "sbin", "lib", "lib32", "lib64", "libx32",
                "var", "run", "opt", "boot"}
# Where checkouts and home folders usually live, whether or not this machine has them.
USUAL_OUTSIDE_ROOTS = {"home", "root", "work", "workspace", "Users", "mnt", "media", "srv", "builds", "data"}
ROOT_VARIABLES = ("${CMAKE_SOURCE_DIR}", "${PROJECT_SOURCE_DIR}", "${xconn_SOURCE_DIR}")
BUILD_VARIABLES = ("${CMAKE_BINARY_DIR}", "${PROJECT_BINARY_DIR}")
ALLOW_MARK = "path-check: allow"

PATH_TOKEN = re.compile(r"[A-Za-z0-9_.\-/]*(?<![A-Za-z0-9_.\-])\.\.(?![A-Za-z0-9_.\-])[A-Za-z0-9_.\-/]*")
ABSOLUTE = re.compile(r"(?<![A-Za-z0-9_.:~$}\])/\-])/([A-Za-z0-9_.\-]+)")


def outside_roots():
    here = {e for e in os.listdir("/") if os.path.isdir(os.path.join("/", e))}
    return (here | USUAL_OUTSIDE_ROOTS) - SYSTEM_ROOTS


def repository_files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                             check=True, capture_output=True).stdout
        return sorted({p for p in out.decode().split("\0") if p and os.path.isfile(os.path.join(root, p))})
    except (OSError, subprocess.CalledProcessError):
        files = []
        for folder, dirs, names in os.walk(root):
            dirs[:] = [d for d in dirs if d != ".git" and not d.startswith("build") and d != "var"]
            files += [os.path.relpath(os.path.join(folder, n), root) for n in names]
        return sorted(files)


def text_of(path):
    with open(path, "rb") as f:
        data = f.read(4 << 20)
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", errors="replace")


def climbs_out(base, token):
    """True when `token` (with `..` segments), taken from folder `base` (a list of names), leaves the root."""
    where = list(base)
    for segment in token.split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if not where:
                return True
            where.pop()
        else:
            where.append(segment)
    return False


def base_for(line, start, file_folder):
    before = line[:start]
    if before.endswith(ROOT_VARIABLES):
        return []
    if before.endswith(BUILD_VARIABLES):
        return ["build"]
    return file_folder


def problems_in(relpath, text, forbidden_roots):
    folder = [p for p in os.path.dirname(relpath).split("/") if p]
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        if ALLOW_MARK in line:
            continue
        for m in PATH_TOKEN.finditer(line):
            if climbs_out(base_for(line, m.start(), folder), m.group(0)):
                found.append(f"{relpath}:{number}: '{m.group(0)}' climbs above the repository root")
        for m in ABSOLUTE.finditer(line):
            if m.group(1) in forbidden_roots:
                found.append(f"{relpath}:{number}: '/{m.group(1)}/…' is an absolute path outside the system folders")
    return found


def check(root):
    forbidden = outside_roots()
    found = []
    for rel in repository_files(root):
        text = text_of(os.path.join(root, rel))
        if text is not None:
            found += problems_in(rel, text, forbidden)
    return found


def self_test():
    planted = {
        "CMakeLists.txt": 'set(SPEC "${CMAKE_SOURCE_DIR}' + '/../elsewhere/spec")\n',
        "docs/page.md": "[the spec](../../elsewhere/spec.md)\n",  # doc-check: allow (planted data)
        "tools/run.sh": 'cd "$(dirname "$0")/../.."\n',
        "tests/x_test.cpp": 'auto dir = "/' + 'work/elsewhere/spec";\n',
        "tests/y_test.cpp": 'auto home = "/' + 'home/someone/checkout";\n',
    }
    clean = {
        "tools/ok.sh": 'cd "$(dirname "$0")/.." && ls /usr/share /etc/hosts /tmp/x /proc/self\n',
        "docs/ok.md": "[arch](../docs/ok.md) and GET /connectors/echo/health at http://127.0.0.1:8840/" + "work" + "/x; 1..64...\n",  # doc-check: allow
        "tests/z_test.cpp": 'clean_filename("../../../../etc/passwd"); // path-check: allow\n',
        "tests/core/w_test.cpp": 'clean_filename("../../etc/passwd");\n',
    }
    with tempfile.TemporaryDirectory() as tree:
        for rel, text in {**planted, **clean}.items():
            os.makedirs(os.path.join(tree, os.path.dirname(rel)), exist_ok=True)
            with open(os.path.join(tree, rel), "w") as f:
                f.write(text)
        found = check(tree)
    caught = {line.split(":", 1)[0] for line in found}
    missed = sorted(set(planted) - caught)
    wrong = sorted(caught - set(planted))
    for rel in missed:
        print(f"missed: {rel}: {planted[rel].strip()}")
    for rel in wrong:
        print(f"flagged a clean file: {rel}: {clean[rel].strip()}")
    return not missed and not wrong


def main():
    if sys.argv[1:] == ["--self-test"]:
        ok = self_test()
        print("self-test: every planted reference caught, no clean line flagged" if ok else "self-test failed")
        sys.exit(0 if ok else 1)
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    found = check(sys.argv[1])
    for line in found:
        print(line)
    print(f"{len(found)} reference(s) outside the repository" if found else "no reference outside the repository")
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A build is a function of its source: the stamp is the commit's time, and a reconfigure rebuilds nothing.

  build_stamp_test.py --source DIR stamp        cmake/xconn_source_time.cmake alone (cmake -P): HEAD's committer
                                                 time, SOURCE_DATE_EPOCH over it, a fixed value without git
  build_stamp_test.py --source DIR rebuild      a scratch build of the echo plugin only: its build header and its .so
                                                 carry the commit's time; configure again and build: nothing is
                                                 compiled or linked, no file changes; cleaned and built again: the
                                                 same bytes

The scratch build lives in a temporary directory and is removed afterwards.
"""
import argparse
import datetime
import hashlib
import os
import re
import subprocess
import sys
import tempfile

PLUGIN_TARGET = "xconn_plugin_echo"


def fail(message, output=""):
    print(f"FAIL: {message}" + (f"\n--- output ---\n{output}" if output else ""), file=sys.stderr)
    sys.exit(1)


def run(command, **kwargs):
    result = subprocess.run(command, capture_output=True, text=True, timeout=kwargs.pop("timeout", 300), **kwargs)
    if result.returncode != 0:
        fail(f"{' '.join(command)} exited {result.returncode}", result.stdout + result.stderr)
    return result.stdout + result.stderr


def commit_epoch(source):
    result = subprocess.run(["git", "log", "-1", "--format=%ct"], cwd=source, capture_output=True, text=True)
    return int(result.stdout) if result.returncode == 0 and result.stdout.strip() else None


def head(source):
    result = subprocess.run(["git", "rev-parse", "HEAD"], cwd=source, capture_output=True, text=True)
    return result.stdout.strip()


def stamp_of(epoch):
    if epoch is None:
        return "0000000000"
    return datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).strftime("%y%m%d%H%M")


def environment_without_epoch():
    env = dict(os.environ)
    env.pop("SOURCE_DATE_EPOCH", None)
    return env


def source_time(source, directory, env):
    with tempfile.TemporaryDirectory(prefix="source-time-") as scratch:
        script = os.path.join(scratch, "print.cmake")
        with open(script, "w") as out:
            out.write(f'include("{source}/cmake/xconn_source_time.cmake")\n'
                      f'xconn_source_time(stamp "{directory}")\n'
                      'message("stamp=${stamp}")\n')
        output = run(["cmake", "-P", script], env=env)
    match = re.search(r"stamp=(\S*)", output)
    if not match:
        fail("cmake -P printed no stamp", output)
    return match.group(1)


def check_stamp(source):
    env = environment_without_epoch()
    got = source_time(source, source, env)
    want = stamp_of(commit_epoch(source))
    if got != want:
        fail(f"the stamp of HEAD is {got}, the commit's time is {want}")
    got = source_time(source, source, dict(env, SOURCE_DATE_EPOCH="86400"))
    if got != "7001020000":
        fail(f"SOURCE_DATE_EPOCH=86400 gives {got}, not 7001020000")
    with tempfile.TemporaryDirectory(prefix="no-git-") as outside:
        got = source_time(source, outside, dict(env, GIT_CEILING_DIRECTORIES=os.path.dirname(outside)))
    if got != "0000000000":
        fail(f"a tree without git gives {got}, not the fixed 0000000000")


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def check_rebuild_once(source, build):
    env = environment_without_epoch()
    configure = ["cmake", "-S", source, "-B", build, "-DCMAKE_BUILD_TYPE=Release", "-DXCONN_BUILD_TESTS=OFF",
                 "-DXCONN_BUILD_BENCH=OFF"]
    compile_ = ["cmake", "--build", build, "-j2", "--target", PLUGIN_TARGET]
    run(configure, env=env)
    run(compile_, env=env)

    plugin = os.path.join(build, "plugins", "echo.so")
    header = os.path.join(build, "plugins", "echo", f"xconn_build_{PLUGIN_TARGET}.h")
    stamp = stamp_of(commit_epoch(source))
    with open(header) as f:
        header_text = f.read()
    if f'#define XCONN_PLUGIN_BUILD_TIME "{stamp}"' not in header_text:
        fail(f"the plugin's build header does not carry the commit's time {stamp}", header_text)
    with open(plugin, "rb") as f:
        if stamp.encode() not in f.read():
            fail(f"{plugin} does not carry the commit's time {stamp}")
    first = digest(plugin)
    header_mtime = os.stat(header).st_mtime_ns
    plugin_mtime = os.stat(plugin).st_mtime_ns

    # The README's commands configure before every build: with nothing changed, that must rebuild nothing.
    run(configure, env=env)
    output = run(compile_, env=env)
    rebuilt = [line for line in output.splitlines() if re.search(r"Building|Linking", line)]
    if rebuilt:
        return f"a reconfigure with nothing changed rebuilt:\n" + "\n".join(rebuilt)
    if os.stat(header).st_mtime_ns != header_mtime:
        return "a reconfigure rewrote the plugin's build header"
    if os.stat(plugin).st_mtime_ns != plugin_mtime:
        return "a reconfigure relinked the plugin"

    # Two builds of one commit give the same file.
    run(["cmake", "--build", build, "--target", "clean"], env=env)
    run(compile_, env=env)
    if digest(plugin) != first:
        return "two builds of one commit gave different plugin files"
    return None


def check_rebuild(source):
    # Another commit landing mid-test legitimately changes the stamp; only a failure at one HEAD counts.
    for _ in range(3):
        before = head(source)
        with tempfile.TemporaryDirectory(prefix="build-stamp-") as build:
            problem = check_rebuild_once(source, build)
        if head(source) == before:
            if problem:
                fail(problem)
            return
    fail("HEAD moved during every attempt")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", required=True)
    parser.add_argument("case", choices=["stamp", "rebuild"])
    args = parser.parse_args()
    source = os.path.abspath(args.source)
    if args.case == "stamp":
        check_stamp(source)
    else:
        check_rebuild(source)
    print(f"ok: {args.case}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

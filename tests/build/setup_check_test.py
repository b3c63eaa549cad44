#!/usr/bin/env python3
"""tools/setup.sh --check against this Debian machine's real dpkg database and toolchain.

  setup_check_test.py --source DIR CASE

CASE is one of:
  as_is              the script as it is passes
  unlisted_package   a copy without libclang-rt-14-dev in its package list fails, naming the package and the stage
  unlisted_untabled  also without the table rows that name it: the fuzz link's trace still names it
  fresh_machine      the runtime's file absent (a renamed path stands in for a machine without it): still named
  not_installed      a listed package whose file is absent: told to run tools/setup.sh

Each broken copy is written to a scratch directory; the repository's script is never changed. Exit 77 (skipped)
where there is no dpkg (not Debian).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

RUNTIME = "libclang-rt-14-dev"
FUZZER_RUNTIME = "/usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.fuzzer-x86_64.a"


def packages_block(text):
    match = re.search(r"^packages=\(\n(.*?)^\)", text, re.S | re.M)
    if not match:
        raise SystemExit("no packages=( ... ) block in tools/setup.sh")
    return match


def without_listed(text, package):
    block = packages_block(text)
    inner = re.sub(rf"(?<![\w.-]){re.escape(package)}(?![\w.-])", "", block.group(1))
    if inner == block.group(1):
        raise SystemExit(f"{package} is not in tools/setup.sh's package list")
    return text[: block.start(1)] + inner + text[block.end(1):]


def without_table_rows(text, package):
    kept = [line for line in text.splitlines(keepends=True)
            if not re.match(rf'\s*"\w+\s+{re.escape(package)}\s', line)]
    if len(kept) == len(text.splitlines()):
        raise SystemExit(f"no table row names {package}")
    return "".join(kept)


def with_listed(text, package, stage, path):
    block = packages_block(text)
    text = text[: block.end(1)] + f"  {package}\n" + text[block.end(1):]
    return text.replace("needs=(\n", f'needs=(\n  "{stage} {package} {path}"\n', 1)


def run_check(script_text):
    with tempfile.TemporaryDirectory(prefix="setup-check-") as scratch:
        script = os.path.join(scratch, "setup.sh")
        with open(script, "w") as out:
            out.write(script_text)
        result = subprocess.run(["bash", script, "--check"], capture_output=True, text=True, timeout=120)
    return result.returncode, result.stdout + result.stderr


def expect(condition, message, output):
    if not condition:
        print(f"FAIL: {message}\n--- output ---\n{output}", file=sys.stderr)
        sys.exit(1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", required=True)
    parser.add_argument("case", choices=["as_is", "unlisted_package", "unlisted_untabled", "fresh_machine",
                                         "not_installed"])
    args = parser.parse_args()
    if not shutil.which("dpkg-query"):
        print("no dpkg-query: not a Debian machine")
        return 77
    with open(os.path.join(args.source, "tools", "setup.sh")) as script:
        original = script.read()

    if args.case == "as_is":
        rc, output = run_check(original)
        expect(rc == 0, "tools/setup.sh --check fails on this machine", output)
    elif args.case == "unlisted_package":
        rc, output = run_check(without_listed(original, RUNTIME))
        expect(rc != 0, f"--check passes without {RUNTIME} in the list", output)
        expect(f"stage fuzz needs package {RUNTIME}" in output, "the stage and the package are not named", output)
    elif args.case == "unlisted_untabled":
        rc, output = run_check(without_table_rows(without_listed(original, RUNTIME), RUNTIME))
        expect(rc != 0, f"--check passes without {RUNTIME} listed or in the table", output)
        expect(re.search(rf"stage fuzz needs package {RUNTIME} \(for \S+libclang_rt\.\S+\)", output),
               "the fuzz link's trace does not name the runtime's package", output)
    elif args.case == "fresh_machine":
        broken = without_listed(original, RUNTIME).replace(FUZZER_RUNTIME, FUZZER_RUNTIME + ".absent")
        rc, output = run_check(broken)
        expect(rc != 0, "--check passes with the fuzzer runtime absent", output)
        expect(f"stage fuzz needs package {RUNTIME} (for {FUZZER_RUNTIME}.absent), which tools/setup.sh does not "
               "install" in output, "the absent file's package is not named", output)
    elif args.case == "not_installed":
        broken = with_listed(original, "xconn-no-such-package", "test", "/usr/bin/xconn-no-such-tool")
        rc, output = run_check(broken)
        expect(rc != 0, "--check passes with a listed package's file absent", output)
        expect("stage test needs package xconn-no-such-package (for /usr/bin/xconn-no-such-tool), not installed: "
               "run tools/setup.sh" in output, "the uninstalled package is not named", output)
    print(f"ok: {args.case}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

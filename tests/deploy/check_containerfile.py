#!/usr/bin/env python3
"""Checks deploy/container/Containerfile without building it (no registry is reachable from CI).

  - one stage, FROM debian:12-slim (bookworm);
  - the project's .deb (package xconn, as cmake/package.cmake names it) is copied in and installed with apt-get,
    and no compiler or build tool is installed or run;
  - the package's user xconn is created with a fixed uid and gid before the package (its postinst keeps an
    existing xconn), and USER is that user, not root; the Kubernetes StatefulSet runs as the same uid and fsGroup;
  - VOLUME /var/lib/xconn, EXPOSE 8840 (the StatefulSet's container port);
  - CMD in exec form runs xconnd --config /etc/xconn/xconnd.yaml (xconnd is PID 1 and gets SIGTERM itself);
  - a HEALTHCHECK on /livez or /readyz, or a note that Kubernetes probes both; either way both routes are
    documented (docs/protocol.md "Operator routes", docs/operations.md) and served (core/app/http_routes.cpp).
With --deb PATH, the package itself: its name and file name match the Containerfile's COPY, and it holds what the
image and the StatefulSet rely on (xconnd, the plugins the sets allow, the configuration, a postinst that keeps
an existing xconn user).

usage: check_containerfile.py [--source ROOT] [--deb PATH] [--self-test] [--steps]
Prints what it checked and every problem; exit 1 on any problem. --steps only prints the instructions as this
parser reads them, each as INSTRUCTION NUL ARGUMENTS NUL (tests/package/image_emulation.sh runs them).
"""

import argparse
import fnmatch
import json
import os
import re
import subprocess
import sys

try:
    import yaml
except ImportError:  # Debian: python3-yaml
    sys.exit("check_containerfile: PyYAML is needed (Debian package python3-yaml)")

COMPILERS = re.compile(r"\b(build-essential|gcc|g\+\+|clang|cmake|ninja-build|make|cpp-\d+|gcc-\d+)\b")
STORE = "/var/lib/xconn"
PORT = 8840


class Problems(list):
    def __init__(self, quiet=False):
        super().__init__()
        self.quiet = quiet

    def add(self, text):
        self.append(text)
        if not self.quiet:
            print("PROBLEM: " + text, flush=True)


# Each break of the Containerfile must be caught (--self-test), or the checks prove nothing.
BREAKS = [
    ("FROM debian:12-slim", "FROM debian:12"),
    ("USER 10001:10001", "USER root"),
    ("USER 10001:10001", ""),
    ("--uid 10001", "--uid 10002"),
    ("VOLUME /var/lib/xconn", "VOLUME /var/lib/other"),
    ("EXPOSE 8840", "EXPOSE 8080"),
    ("ca-certificates /tmp", "ca-certificates build-essential /tmp"),
    ("install -y --no-install-recommends ca-certificates /tmp/xconn_*_amd64.deb",
     "install -y --no-install-recommends ca-certificates && dpkg -i /tmp/xconn_*_amd64.deb"),
    ('CMD ["/usr/bin/xconnd", "--config", "/etc/xconn/xconnd.yaml"]', "CMD xconnd --config /etc/xconn/xconnd.yaml"),
    ("COPY xconn_*_amd64.deb /tmp/", "COPY . /tmp/"),
]


def instructions(text):
    """(INSTRUCTION, arguments) for each instruction, continuation lines joined, comments left out."""
    out, current = [], ""
    for line in text.splitlines():
        stripped = line.strip()
        if not current and (not stripped or stripped.startswith("#")):
            continue
        if stripped.startswith("#"):  # a comment inside a continued instruction
            continue
        if stripped.endswith("\\"):
            current += stripped[:-1] + " "
            continue
        current += stripped
        word, _, rest = current.partition(" ")
        out.append((word.upper(), rest.strip()))
        current = ""
    return out


def exec_form(args):
    try:
        value = json.loads(args)
    except ValueError:
        return None
    return value if isinstance(value, list) and all(isinstance(v, str) for v in value) else None


def statefulset(source):
    path = os.path.join(source, "deploy", "kubernetes", "base", "statefulset.yaml")
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        docs = [d for d in yaml.safe_load_all(f) if d and d.get("kind") == "StatefulSet"]
    return docs[0] if docs else None


def check(source, deb, problems, text=None):
    if text is None:
        with open(os.path.join(source, "deploy", "container", "Containerfile"), encoding="utf-8") as f:
            text = f.read()
    steps = instructions(text)
    of = lambda name: [a for i, a in steps if i == name]

    froms = of("FROM")
    if froms != ["debian:12-slim"] and froms != ["debian:bookworm-slim"]:
        problems.add(f"FROM {froms}: want one stage FROM debian:12-slim")

    copies = [a.split() for a in of("COPY") + of("ADD")]
    deb_sources = [src for words in copies for src in words[:-1] if re.fullmatch(r"xconn_[^/ ]*\.deb", src)]
    if not deb_sources:
        problems.add("no COPY of the project's .deb (xconn_<version>-1_amd64.deb)")
    runs = " && ".join(of("RUN"))
    installs = re.findall(r"apt-get install ([^&;]*)", runs)
    if not any(re.search(r"/xconn_[^ ]*\.deb", i) for i in installs):
        problems.add("no `apt-get install` of the copied .deb (apt-get resolves its dependencies; dpkg -i would not)")
    for i in installs:
        if "--no-install-recommends" not in i:
            problems.add(f"apt-get install without --no-install-recommends: {i.strip()}")
        for m in COMPILERS.finditer(re.sub(r"\S*\.deb", "", i)):
            problems.add(f"the image installs a build tool ({m.group(1)}): the .deb is built outside it")
    if re.search(r"(^|[;&|]\s*)(cmake|make|ninja|g\+\+|gcc|cc)\s", runs):
        problems.add("a RUN compiles: the image takes the built .deb only")
    if "rm -rf /var/lib/apt/lists" not in runs:
        problems.add("the apt lists stay in the image (rm -rf /var/lib/apt/lists/*)")

    uid = re.search(r"useradd\b[^&;]*--uid\s+(\d+)[^&;]*\sxconn\b", runs)
    gid = re.search(r"groupadd\b[^&;]*--gid\s+(\d+)[^&;]*\sxconn\b", runs)
    if not uid or not gid:
        problems.add("the user and group xconn are not created with a fixed uid and gid (useradd --uid, groupadd --gid)")
    elif uid.start() > runs.find("apt-get install"):
        problems.add("xconn is created after the package: its postinst would have made one with another uid")
    users = of("USER")
    if not users:
        problems.add("no USER: the image would run as root")
    else:
        user = users[-1]
        allowed = {"xconn", "xconn:xconn"}
        if uid and gid:
            allowed |= {uid.group(1), f"{uid.group(1)}:{gid.group(1)}"}
        if user not in allowed or user.split(":")[0] in ("root", "0"):
            problems.add(f"USER {user}: want xconn (its uid {uid.group(1) if uid else '?'})")
        elif not user.split(":")[0].isdigit():
            if not problems.quiet:
                print("  note: USER by name: Kubernetes' runAsNonRoot needs runAsUser in the pod then", flush=True)

    volumes = " ".join(of("VOLUME"))
    if STORE not in volumes:
        problems.add(f"no VOLUME {STORE}")
    if str(PORT) not in " ".join(of("EXPOSE")).replace("/tcp", "").split():
        problems.add(f"no EXPOSE {PORT}")
    cmds = of("CMD")
    cmd = exec_form(cmds[-1]) if cmds else None
    if not cmd or os.path.basename(cmd[0]) != "xconnd" or cmd[1:] != ["--config", "/etc/xconn/xconnd.yaml"]:
        problems.add(f"CMD {cmds[-1] if cmds else None}: want exec form [\"/usr/bin/xconnd\", \"--config\", \"/etc/xconn/xconnd.yaml\"]")
    if of("ENTRYPOINT"):
        problems.add("an ENTRYPOINT: the StatefulSet's command and the CMD assume none")

    health = " ".join(of("HEALTHCHECK"))
    if health:
        if "/livez" not in health and "/readyz" not in health:
            problems.add("HEALTHCHECK probes neither /livez nor /readyz")
    elif not ("/readyz" in text and "/livez" in text and "HEALTHCHECK" in text):
        problems.add("no HEALTHCHECK and no note that Kubernetes probes /readyz and /livez")
    for route in ("/readyz", "/livez"):
        for doc in ("docs/protocol.md", "docs/operations.md"):
            with open(os.path.join(source, doc), encoding="utf-8") as f:
                if f"GET {route}" not in f.read():
                    problems.add(f"{doc} does not document GET {route}")
        with open(os.path.join(source, "core", "app", "http_routes.cpp"), encoding="utf-8") as f:
            if f'"{route}"' not in f.read():
                problems.add(f"core/app/http_routes.cpp serves no {route}")

    # The package's name as the build names it.
    with open(os.path.join(source, "cmake", "package.cmake"), encoding="utf-8") as f:
        if not re.search(r"set\(CPACK_DEBIAN_PACKAGE_NAME xconn\)", f.read()):
            problems.add("cmake/package.cmake no longer names the package xconn")

    # The StatefulSet runs what the image holds, as the image's user.
    sts = statefulset(source)
    if sts is None:
        problems.add("deploy/kubernetes/base/statefulset.yaml has no StatefulSet")
    else:
        pod = sts["spec"]["template"]["spec"]
        c = pod["containers"][0]
        sc = pod.get("securityContext", {})
        if uid and sc.get("runAsUser") != int(uid.group(1)):
            problems.add(f"the StatefulSet's runAsUser {sc.get('runAsUser')} is not xconn's uid {uid.group(1)}")
        if gid and sc.get("fsGroup") != int(gid.group(1)):
            problems.add(f"the StatefulSet's fsGroup {sc.get('fsGroup')} is not xconn's gid {gid.group(1)}")
        if [p.get("containerPort") for p in c.get("ports", [])] != [PORT]:
            problems.add(f"the StatefulSet's container port is not {PORT}")
        if cmd and c.get("command", [None])[0] not in (cmd[0], "/usr/bin/" + cmd[0]):
            problems.add(f"the StatefulSet runs {c.get('command')}, the image {cmd}")
        if not any(m.get("mountPath") == STORE for m in c.get("volumeMounts", [])):
            problems.add(f"the StatefulSet mounts nothing at the image's VOLUME {STORE}")
        pre = (c.get("lifecycle", {}).get("preStop", {}).get("exec") or {}).get("command") or []
        if pre[:1] == ["sleep"] and not problems.quiet:
            print("  note: the preStop runs `sleep` from the image (coreutils of debian:12-slim)", flush=True)

    if deb:
        check_deb(source, deb, deb_sources, problems)
    return steps


def check_deb(source, deb, deb_sources, problems):
    name = os.path.basename(deb)
    if deb_sources and not any(fnmatch.fnmatch(name, pattern) for pattern in deb_sources):
        problems.add(f"{name} does not match the Containerfile's COPY {deb_sources}")
    field = lambda f: subprocess.run(["dpkg-deb", "-f", deb, f], capture_output=True, text=True, check=True).stdout.strip()
    if field("Package") != "xconn":
        problems.add(f"{name} is package {field('Package')}, not xconn")
    contents = subprocess.run(["dpkg-deb", "-c", deb], capture_output=True, text=True, check=True).stdout
    files = {line.split()[-1].lstrip(".") for line in contents.splitlines() if line.strip()}
    wanted = {"/usr/bin/xconnd", "/etc/xconn/xconnd.yaml"}
    root = os.path.join(source, "deploy", "kubernetes")
    for set_name in sorted(os.listdir(root)):
        cfg = os.path.join(root, set_name, "xconnd.yaml")
        if os.path.exists(cfg):
            with open(cfg, encoding="utf-8") as f:
                for plugin in (yaml.safe_load(f).get("plugins") or {}).get("allow") or []:
                    wanted.add(f"/usr/lib/xconn/plugins/{plugin}.so")
    for w in sorted(wanted - files):
        problems.add(f"{name} has no {w}")
    # The probes' routes: a package built before them would answer 401 and never be ready. The route strings
    # are in xconnd's binary (core/app/http_routes.cpp).
    unpacked = subprocess.run(["dpkg-deb", "--fsys-tarfile", deb], capture_output=True, check=True).stdout
    xconnd = subprocess.run(["tar", "-xOf", "-", "./usr/bin/xconnd"], input=unpacked, capture_output=True).stdout
    for route in ("/readyz", "/livez"):
        if route.encode() not in xconnd:
            problems.add(f"{name}'s xconnd does not serve {route} (built before the probes? rebuild the package)")
    control = subprocess.run(["dpkg-deb", "-I", deb, "postinst"], capture_output=True, text=True).stdout
    if "getent passwd xconn" not in control:
        problems.add(f"{name}'s postinst does not keep an existing xconn user (the image's fixed uid)")
    print(f"  {name}: package xconn with {', '.join(sorted(wanted))}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    parser.add_argument("--deb", help="the built xconn .deb, to check against the Containerfile")
    parser.add_argument("--self-test", action="store_true", help="break the Containerfile in known ways; fail unless each is caught")
    parser.add_argument("--steps", action="store_true", help="print the instructions, NUL-separated, and nothing else")
    args = parser.parse_args()
    source = os.path.abspath(args.source)
    if args.steps:
        with open(os.path.join(source, "deploy", "container", "Containerfile"), encoding="utf-8") as f:
            for word, rest in instructions(f.read()):
                sys.stdout.write(f"{word}\0{rest}\0")
        return 0
    if args.self_test:
        with open(os.path.join(source, "deploy", "container", "Containerfile"), encoding="utf-8") as f:
            text = f.read()
        missed = 0
        for old, new in BREAKS:
            if old not in text:
                print(f"  MISSED: {old!r} is no longer in the Containerfile (update BREAKS)")
                missed += 1
                continue
            found = Problems(quiet=True)
            check(source, None, found, text.replace(old, new, 1))
            print(f"  {'caught' if found else 'MISSED'}: {old!r} -> {new!r}{' (' + found[0] + ')' if found else ''}")
            missed += not found
        print(f"check_containerfile self-test: {len(BREAKS) - missed} passed, {missed} failed")
        return 1 if missed else 0
    problems = Problems()
    steps = check(source, args.deb, problems)
    print(f"check_containerfile: {len(steps)} instructions of deploy/container/Containerfile checked")
    if problems:
        print(f"check_containerfile: FAIL: {len(problems)} problems")
        return 1
    print("check_containerfile: PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())

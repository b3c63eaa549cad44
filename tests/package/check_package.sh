#!/usr/bin/env bash
# Checks a built xconn .deb without installing it: fields, file list, conffiles, maintainer scripts, the packaged
# configuration, lintian, and `systemd-analyze verify` of both units against the package's own files.
# usage: tests/package/check_package.sh DEB        (lintian, systemd and dpkg-dev must be installed)
set -euo pipefail
[ $# -eq 1 ] && [ -f "$1" ] || { echo "usage: $0 DEB" >&2; exit 2; }
deb=$(realpath "$1")
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d /tmp/xconn-check-package.XXXXXX)
failures=0
trap 'rm -rf "$work"' EXIT
ok() { echo "  ok: $*"; }
bad() { echo "  FAIL: $*"; failures=$((failures + 1)); }
section() { echo "== $*"; }

section "fields"
dpkg-deb -f "$deb" Package Version Architecture Depends Section Priority Maintainer | sed 's/^/  /'
[ "$(dpkg-deb -f "$deb" Package)" = xconn ] && ok "package name xconn" || bad "package name is not xconn"
version=$(dpkg-deb -f "$deb" Version)
project_version=$(sed -n 's/^project(xconn VERSION \([0-9.]*\).*/\1/p' "$repo/CMakeLists.txt")
case "$version" in
  "$project_version"-*) ok "version $version is the project's $project_version" ;;
  *) bad "version $version does not start with the project version $project_version-" ;;
esac
# Each dependency's package name, one a line (the version constraints dropped).
dpkg-deb -f "$deb" Depends | tr ',' '\n' | awk '{print $1}' >"$work/depends"
for dep in python3 adduser procps libc6 libstdc++6; do
  grep -qxF "$dep" "$work/depends" && ok "Depends has $dep" || bad "Depends lacks $dep"
done

section "file list"
dpkg-deb -c "$deb" >"$work/list"
# "./usr/bin/xconnd" -> "/usr/bin/xconnd"; directories end in "/"
awk '{print $6}' "$work/list" | sed 's|^\./|/|' >"$work/paths"
expected=(
  /usr/bin/xconnd /usr/bin/xconnctl
  /usr/lib/xconn/plugins/echo.so /usr/lib/xconn/plugins/telegram.so
  /usr/lib/xconn/plugins/irc.so /usr/lib/xconn/plugins/webhook.so /usr/lib/xconn/plugins/wechat.so
  /etc/xconn/xconnd.yaml
  /lib/systemd/system/xconnd.service /lib/systemd/system/xconnd@.service
  /usr/share/doc/xconn/copyright /usr/share/doc/xconn/changelog.Debian.gz
  /usr/share/man/man8/xconnd.8.gz /usr/share/lintian/overrides/xconn
)
for p in "${expected[@]}"; do
  grep -qxF "$p" "$work/paths" && ok "$p" || bad "$p is missing"
done
# Nothing but the files above and their folders.
while read -r p; do
  case "$p" in */) continue ;; esac
  printf '%s\n' "${expected[@]}" | grep -qxF "$p" || bad "unexpected file $p"
done <"$work/paths"
grep -q '^/usr/local' "$work/paths" && bad "files under /usr/local" || ok "nothing under /usr/local"
awk '$2 != "root/root" {print}' "$work/list" | grep . && bad "files not owned by root/root" || ok "every file is root/root"
grep -E '^-' "$work/list" | awk '{print $1, $6}' | while read -r mode p; do
  case "$p" in
    ./usr/bin/*) want=-rwxr-xr-x ;;
    *) want=-rw-r--r-- ;;
  esac
  [ "$mode" = "$want" ] || echo "$p has mode $mode, expected $want"
done >"$work/modes"
[ -s "$work/modes" ] && bad "$(cat "$work/modes")" || ok "file modes (0755 programs, 0644 the rest)"

section "contents"
dpkg-deb -x "$deb" "$work/root"
dpkg-deb -e "$deb" "$work/control"
# No path of the machine that built it: not the source tree, not the build folder (when the .deb is still in
# the deb/ folder tools/package.sh gives it), in any file.
needles=("$repo" _CPack_Packages CMakeFiles)
build_dir=$(dirname "$(dirname "$deb")")
[ -f "$build_dir/CMakeCache.txt" ] && needles+=("$build_dir")
for needle in "${needles[@]}"; do
  if grep -rlF --binary-files=text "$needle" "$work/root" "$work/control" >"$work/hits"; then
    bad "build path '$needle' in: $(tr '\n' ' ' <"$work/hits")"
  else
    ok "no '$needle' inside"
  fi
done
for f in "$work/root/usr/bin/xconnd" "$work/root/usr/lib/xconn/plugins/"*.so; do
  name=${f#"$work/root"}
  readelf -h "$f" >/dev/null 2>&1 || { bad "$name is not an ELF object"; continue; }
  readelf -SW "$f" | grep -qF ' .symtab ' && bad "$name is not stripped"
  readelf -d "$f" | grep -qE 'R(UN)?PATH' && bad "$name has an RPATH or RUNPATH"
  readelf -lW "$f" | grep -A1 GNU_STACK | grep -q 'RWE' && bad "$name wants an executable stack"
done
ok "programs and plugins: stripped, no RPATH, no executable stack"
head -c 2 "$work/root/usr/bin/xconnctl" | grep -q '#!' && ok "xconnctl is a script" || bad "xconnctl has no #! line"
top=$(zcat "$work/root/usr/share/doc/xconn/changelog.Debian.gz" | head -n1)
[[ "$top" == "xconn ($version) "* ]] && ok "changelog.Debian.gz starts with $version" ||
  bad "changelog.Debian.gz starts with '$top', not version $version"
if "$work/root/usr/bin/xconnd" --check-config --config "$work/root/etc/xconn/xconnd.yaml" >"$work/check" 2>&1; then
  ok "xconnd --check-config accepts /etc/xconn/xconnd.yaml"
else
  bad "xconnd --check-config rejects /etc/xconn/xconnd.yaml: $(cat "$work/check")"
fi
grep -qE '^  listen: "127\.0\.0\.1:8840"' "$work/root/etc/xconn/xconnd.yaml" &&
  grep -qE '^  path: "/var/lib/xconn"' "$work/root/etc/xconn/xconnd.yaml" &&
  grep -qE '^  dir: "/usr/lib/xconn/plugins"' "$work/root/etc/xconn/xconnd.yaml" &&
  grep -qE '^  watch: true' "$work/root/etc/xconn/xconnd.yaml" &&
  ok "packaged config: 127.0.0.1:8840, /var/lib/xconn, /usr/lib/xconn/plugins, watch" ||
  bad "packaged config lacks listen/store.path/plugins.dir/plugins.watch as packaged"

section "control files"
ls -l "$work/control" | sed 's/^/  /'
grep -qxF /etc/xconn/xconnd.yaml "$work/control/conffiles" 2>/dev/null && ok "conffiles has /etc/xconn/xconnd.yaml" ||
  bad "conffiles lacks /etc/xconn/xconnd.yaml"
for s in postinst prerm postrm; do
  f="$work/control/$s"
  if [ ! -f "$f" ]; then bad "$s is missing"; continue; fi
  [ -x "$f" ] || bad "$s is not executable"
  head -n1 "$f" | grep -qx '#!/bin/sh' || bad "$s does not start with #!/bin/sh"
  sh -n "$f" && ok "$s: sh -n clean" || bad "$s: sh -n fails"
  if command -v shellcheck >/dev/null; then
    shellcheck -s sh "$f" >"$work/sc" 2>&1 && ok "$s: shellcheck clean" || bad "$s: shellcheck: $(cat "$work/sc")"
  fi
done
[ -f "$work/control/md5sums" ] && ok "md5sums present" || bad "md5sums missing"

section "lintian"
# An error or a warning fails; informational tags (I:) are shown, and so are the overridden ones (O:), each
# with its reason (N:) from deploy/debian/lintian-overrides. (--show-overrides changes lintian's exit status,
# hence the second run for the listing.)
if lintian --fail-on error,warning "$deb" >"$work/lintian" 2>&1; then
  ok "lintian: no error, no warning"
else
  bad "lintian: $(cat "$work/lintian")"
fi
lintian -I --show-overrides "$deb" 2>&1 | grep -v 'running with root privileges' | sed 's/^/  /' || true

section "systemd-analyze verify"
# No systemd has to run: verify works on a root folder holding the package's files, the host's own unit files
# (for the targets the units name) and /bin/kill (ExecReload). Any message counts as a failure: verify exits 0
# on an unknown key or a value it cannot parse, and says so only on stderr.
vroot="$work/root"
mkdir -p "$vroot/bin"
cp -an /lib/systemd/system/. "$vroot/lib/systemd/system/"
cp /bin/kill "$vroot/bin/kill"
for unit in xconnd.service xconnd@test.service; do
  if (cd "$work" && systemd-analyze verify --man=no --generators=no --root="$vroot" "$unit") >"$work/verify" 2>&1 &&
    [ ! -s "$work/verify" ]; then
    ok "$unit"
  else
    bad "$unit: $(cat "$work/verify")"
  fi
done
echo "  exposure (systemd-analyze security --offline, lower is safer):"
(cd "$work" && systemd-analyze security --offline=yes --root="$vroot" xconnd.service 2>&1 | tail -n1 | sed 's/^/    /') || true

if ((failures)); then
  echo "check_package: FAIL ($failures)"
  exit 1
fi
echo "check_package: PASS"

#!/usr/bin/env bash
# Installs an xconn .deb for real into a fresh Debian 12 (debootstrap --variant=minbase bookworm, under /tmp),
# maintainer scripts and all, then: the user xconn owns /var/lib/xconn; xconnd started as xconn on the packaged
# /etc/xconn/xconnd.yaml serves echo's health (and every packaged plugin) with the key it generated;
# `xconnctl status` answers; SIGTERM stops it cleanly; `apt-get remove` keeps the configuration and the data and
# `apt-get purge` takes both. Systemd does not run in the chroot (a policy-rc.d forbids starting services
# anyway); the units are checked by tests/package/check_package.sh.
#
# usage: tests/package/chroot_install.sh DEB        (as root: debootstrap, chroot and mounts)
# Needs debootstrap, curl, python3 and util-linux (unshare, setpriv, findmnt) on the host, and the Debian mirror.
#   XCONN_DEBIAN_MIRROR  the mirror (default http://deb.debian.org/debian)
#   XCONN_CI_CACHE       where the bootstrapped base (a tarball, rebuilt when a week old) and the .debs apt fetched
#                        are kept between runs (default /var/cache/xconn-ci; empty: nothing is kept)
#   XCONN_CHROOT_TMPFS=0 build the chroot on disk even when there is memory for a tmpfs (there by default with
#                        3 GiB available: installs run faster, and the cleanup is an unmount, not a long rm -rf)
#   XCONN_KEEP_CHROOT=1  leave the scratch folder (unmounted; on disk only) for a look after a failure
# Every wait has a deadline; every exit path stops the daemon, unmounts and removes the scratch folder. The last
# line is `chroot_install: PASS` or `chroot_install: FAIL: <why>`.
set -euo pipefail

if [ $# -ne 1 ] || [ ! -f "$1" ]; then
  echo "usage: $0 DEB" >&2
  exit 2
fi
me=chroot_install
# shellcheck source=tests/package/chroot_common.sh
. "$(dirname "$0")/chroot_common.sh"
deb=$(realpath "$1")

# --- a Debian 12 root --------------------------------------------------------------------------------------
chroot_base

# --- install -----------------------------------------------------------------------------------------------
name=$(basename "$deb")
cp "$deb" "$root/tmp/$name"
chmod 0644 "$root/tmp/$name"
log "apt-get update"
step_log="$work/apt.log"
timeout 300 "${in_root[@]}" apt-get -q update >"$work/apt.log" 2>&1 || fail "apt-get update failed or took over 5 minutes"
log "apt-get install -y ./$name"
timeout 900 "${in_root[@]}" sh -c "cd /tmp && apt-get install -y -q ./$name" >"$work/apt.log" 2>&1 ||
  fail "apt-get install failed or took over 15 minutes"
grep -E '^(Fetched|Setting up xconn|Need to get)' "$work/apt.log" | sed 's/^/    /' || true
status=$("${in_root[@]}" dpkg-query -W -f='${Status} ${Version}' xconn)
log "installed: $status"
[[ "$status" == "install ok installed "* ]] || fail "dpkg says xconn is '$status'"
"${in_root[@]}" dpkg-query -W -f='${Conffiles}\n' xconn | grep -q ' /etc/xconn/xconnd.yaml ' ||
  fail "/etc/xconn/xconnd.yaml is not a conffile of the installed package"

passwd=$("${in_root[@]}" getent passwd xconn) || fail "no user xconn after install"
log "user: $passwd"
IFS=: read -r _ _ uid _ _ home shell <<<"$passwd"
((uid < 1000)) || fail "xconn is not a system user (uid $uid)"
[ "$home" = /var/lib/xconn ] || fail "xconn's home is $home"
[ "$shell" = /usr/sbin/nologin ] || fail "xconn's shell is $shell"
"${in_root[@]}" getent group xconn >/dev/null || fail "no group xconn after install"
owner=$("${in_root[@]}" stat -c '%U:%G %a' /var/lib/xconn) || fail "no /var/lib/xconn after install"
[ "$owner" = "xconn:xconn 750" ] || fail "/var/lib/xconn is $owner, expected xconn:xconn 750"
log "/var/lib/xconn: $owner"
[ -L "$root/etc/systemd/system/multi-user.target.wants/xconnd.service" ] ||
  fail "postinst did not enable xconnd.service (no multi-user.target.wants link)"
log "xconnd.service enabled (deb-systemd-helper), not started (no systemd here)"

log "apt-get install --reinstall (postinst again, as on an upgrade)"
timeout 300 "${in_root[@]}" sh -c "cd /tmp && apt-get install -y -q --reinstall ./$name" >"$work/apt.log" 2>&1 ||
  fail "reinstall failed"
[ "$("${in_root[@]}" getent passwd xconn)" = "$passwd" ] || fail "the reinstall changed the user xconn"

# --- run ---------------------------------------------------------------------------------------------------
port=8840
if ! port_free "$port"; then
  port=$(free_port)
  sed -i "s|^  listen: \"127.0.0.1:8840\"|  listen: \"127.0.0.1:$port\"|" "$root/etc/xconn/xconnd.yaml"
  grep -q "^  listen: \"127.0.0.1:$port\"" "$root/etc/xconn/xconnd.yaml" || fail "cannot move the listen port to $port"
  log "127.0.0.1:8840 is taken here: the chroot's xconnd.yaml listens on $port instead"
fi
# The daemon runs in a view of the chroot shaped like xconnd.service's sandbox, so that a write outside
# /var/lib/xconn or an executable mapping shows up here: / read-only (ProtectSystem=strict) but /var/lib/xconn
# (ReadWritePaths), an empty /tmp (PrivateTmp), empty read-only home folders (ProtectHome), then as xconn
# with no capability and no new privileges (User=, CapabilityBoundingSet=, NoNewPrivileges=) and the kernel's
# memory-deny-write-execute (MemoryDenyWriteExecute=, prctl PR_SET_MDWE, where the kernel has it). Type=notify is
# played too: a NOTIFY_SOCKET whose listener logs each message with the sender's pid (NotifyAccess=main).
# Not covered here: the system call filter and the other Protect*/Restrict* settings, which only systemd applies.
sandbox="$work/sandbox"
mkdir "$sandbox"
mount --bind "$root/var/lib/xconn" "$root/var/lib/xconn"
mount --rbind "$root" "$sandbox"
mount --make-rslave "$sandbox"
mount -o remount,bind,ro "$sandbox"
mount -t tmpfs -o mode=1777 xconn-private-tmp "$sandbox/tmp"
for d in home root; do mount -t tmpfs -o ro,mode=0755 xconn-protect-home "$sandbox/$d"; done
if touch "$sandbox/etc/xconn/.rw-probe" 2>/dev/null; then fail "the sandbox's /etc is writable"; fi
touch "$sandbox/var/lib/xconn/.rw-probe" && rm "$sandbox/var/lib/xconn/.rw-probe" ||
  fail "the sandbox's /var/lib/xconn is not writable"
mount -t tmpfs -o mode=0755 xconn-run "$sandbox/run"
notify_listener='import os, socket, struct, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o777)
s.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
end = time.monotonic() + 600  # bounded even if nobody stops it
while time.monotonic() < end:
    s.settimeout(end - time.monotonic())
    try:
        data, ancillary, _, _ = s.recvmsg(4096, socket.CMSG_SPACE(12))
    except socket.timeout:
        break
    pid = "?"
    for level, kind, value in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
            pid = struct.unpack("iII", value[:12])[0]
    for line in data.decode(errors="replace").splitlines():
        print(pid, line, flush=True)'
python3 -c "$notify_listener" "$sandbox/run/notify" >"$work/notify.log" 2>&1 &
helper_pid=$!
deadline=$(($(date +%s) + 10))
until [ -S "$sandbox/run/notify" ]; do
  (($(date +%s) < deadline)) || fail "the NOTIFY_SOCKET listener did not start"
  sleep 0.1
done
# notified MESSAGE [AFTER_LINE]: the line number of the first MESSAGE from the daemon's pid past AFTER_LINE.
notified() { awk -v pid="$main_pid" -v msg="$1" -v after="${2:-0}" 'NR > after && $1 == pid && $2 == msg {print NR; exit}' "$work/notify.log"; }
mdwe='import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
mdwe = libc.prctl(65, 1, 0, 0, 0) == 0  # PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN (Linux 6.3)
print("memory-deny-write-execute:", "on" if mdwe else "not in this kernel", file=sys.stderr, flush=True)
os.execv(sys.argv[1], sys.argv[1:])'
log "starting xconnd as xconn on 127.0.0.1:$port in a read-only view of the chroot (as the unit's sandbox)"
chroot "$sandbox" /usr/bin/env -i PATH=/usr/bin:/bin LC_ALL=C.UTF-8 NOTIFY_SOCKET=/run/notify \
  setpriv --reuid=xconn --regid=xconn --init-groups --no-new-privs --inh-caps=-all --bounding-set=-all -- \
  /bin/sh -c 'cd /var/lib/xconn && exec python3 -c "$0" /usr/bin/xconnd --config /etc/xconn/xconnd.yaml' "$mdwe" \
  >"$work/xconnd.log" 2>&1 &
daemon_pid=$!
main_pid=$daemon_pid  # daemon_pid is cleared once it has been waited for; this stays
step_log="$work/xconnd.log"
key_file="$root/var/lib/xconn/api_key"
deadline=$(($(date +%s) + 60))
health=""
while :; do
  kill -0 "$daemon_pid" 2>/dev/null || fail "xconnd exited before serving"
  if [ -s "$key_file" ]; then
    key=$(cat "$key_file")
    health=$(curl -fsS -m 2 -H "Authorization: Bearer $key" "http://127.0.0.1:$port/connectors/echo/health" 2>/dev/null) &&
      break
  fi
  (($(date +%s) < deadline)) || fail "no answer from echo's health within 60 s"
  sleep 0.2
done
log "echo health: ${health:0:160}"
until ready_at=$(notified READY=1) && [ -n "$ready_at" ]; do
  (($(date +%s) < deadline)) || fail "no READY=1 from xconnd's own pid on NOTIFY_SOCKET within 60 s"
  sleep 0.1
done
log "sd_notify: READY=1 from the main pid $main_pid (Type=notify, NotifyAccess=main)"
python3 -c 'import json, sys; sys.exit(json.loads(sys.argv[1]).get("status") != "ok")' "$health" ||
  fail "echo's health is not ok"
connectors=$(curl -fsS -m 5 -H "Authorization: Bearer $key" "http://127.0.0.1:$port/connectors") ||
  fail "GET /connectors failed"
loaded=$(python3 -c 'import json, sys; print(" ".join(sorted(c["plugin_id"] for c in json.loads(sys.argv[1])["connectors"])))' \
  "$connectors")
log "plugins loaded from /usr/lib/xconn/plugins: $loaded"
[ "$loaded" = "echo irc telegram webhook wechat" ] || fail "expected echo irc telegram webhook wechat loaded, got '$loaded'"
files=$("${in_root[@]}" stat -c '%n %U:%G %a' /var/lib/xconn/api_key /var/lib/xconn/sealing_key) ||
  fail "no api_key or sealing_key in /var/lib/xconn"
log "keys: $(echo "$files" | tr '\n' ';')"
! grep -v ' xconn:xconn 600$' <<<"$files" >/dev/null || fail "a key file is not xconn:xconn 0600"

if [ -x "$root/usr/bin/xconnctl" ]; then
  # As root, which reads /var/lib/xconn/api_key (as the user xconn could).
  log "xconnctl status"
  timeout 30 "${in_root[@]}" XCONN_URL="http://127.0.0.1:$port" xconnctl status >"$work/xconnctl.out" 2>&1 ||
    { show_tail "$work/xconnctl.out"; fail "xconnctl status failed"; }
  sed 's/^/    /' "$work/xconnctl.out"
  log "xconnctl check-config /etc/xconn/xconnd.yaml"
  timeout 30 "${in_root[@]}" xconnctl check-config /etc/xconn/xconnd.yaml >"$work/xconnctl.out" 2>&1 ||
    { show_tail "$work/xconnctl.out"; fail "xconnctl check-config failed"; }
  sed 's/^/    /' "$work/xconnctl.out"
fi

log "SIGHUP (ExecReload=/bin/kill -HUP \$MAINPID)"
kill -HUP "$daemon_pid"
deadline=$(($(date +%s) + 30))
until reloading_at=$(notified RELOADING=1 "$ready_at") && [ -n "$reloading_at" ] &&
  ready_again_at=$(notified READY=1 "$reloading_at") && [ -n "$ready_again_at" ]; do
  (($(date +%s) < deadline)) || fail "no RELOADING=1 then READY=1 within 30 s of SIGHUP"
  sleep 0.1
done
log "sd_notify: RELOADING=1, then READY=1"

log "SIGTERM"
stop_daemon 30
[ "$daemon_rc" -eq 0 ] || fail "xconnd exited with status $daemon_rc after SIGTERM"
deadline=$(($(date +%s) + 5))  # the listener may print a moment after the daemon has gone
until [ -n "$(notified STOPPING=1 "$ready_again_at")" ]; do
  (($(date +%s) < deadline)) || fail "no STOPPING=1 on NOTIFY_SOCKET from xconnd"
  sleep 0.1
done
log "xconnd stopped (STOPPING=1, exit status 0)"
kill "$helper_pid" 2>/dev/null || true  # its socket keeps the sandbox's /run busy
wait "$helper_pid" 2>/dev/null || true
helper_pid=""
grep -E '^memory-deny-write-execute' "$work/xconnd.log" | sed 's/^/    /' || true
for m in $(mounts_below "$work"); do
  case "$m" in "$sandbox" | "$sandbox"/* | "$root/var/lib/xconn") umount "$m" ;; esac
done

# --- remove, then purge ------------------------------------------------------------------------------------
log "apt-get remove xconn"
step_log="$work/apt.log"
timeout 300 "${in_root[@]}" apt-get remove -y -q xconn >"$work/apt.log" 2>&1 || fail "apt-get remove failed"
[ ! -e "$root/usr/bin/xconnd" ] || fail "remove left /usr/bin/xconnd"
[ -f "$root/etc/xconn/xconnd.yaml" ] || fail "remove took the conffile /etc/xconn/xconnd.yaml"
[ -s "$root/var/lib/xconn/api_key" ] || fail "remove took the data in /var/lib/xconn"
[ "$(readlink "$root/etc/systemd/system/xconnd.service")" = /dev/null ] || fail "remove did not mask xconnd.service"
log "removed: configuration and data kept, xconnd.service masked"
log "apt-get install ./$name again (over the kept configuration)"
timeout 300 "${in_root[@]}" sh -c "cd /tmp && apt-get install -y -q ./$name" >"$work/apt.log" 2>&1 ||
  fail "installing again after remove failed"
[ ! -L "$root/etc/systemd/system/xconnd.service" ] || fail "installing again did not unmask xconnd.service"
[ -L "$root/etc/systemd/system/multi-user.target.wants/xconnd.service" ] || fail "xconnd.service not enabled again"
[ "$("${in_root[@]}" getent passwd xconn)" = "$passwd" ] || fail "installing again changed the user xconn"
[ "$("${in_root[@]}" stat -c '%U:%G %a' /var/lib/xconn)" = "xconn:xconn 750" ] || fail "/var/lib/xconn changed"
[ -s "$root/var/lib/xconn/api_key" ] || fail "installing again lost the data"
log "installed again: unmasked, enabled, same user, data still there"
log "apt-get purge xconn"
timeout 300 "${in_root[@]}" apt-get purge -y -q xconn >"$work/apt.log" 2>&1 || fail "apt-get purge failed"
grep 'xconn: purge' "$work/apt.log" | sed 's/^/    /' || true
status=$("${in_root[@]}" dpkg-query -W -f='${Status}' xconn 2>/dev/null) || status="unknown to dpkg"
[[ "$status" == "unknown to dpkg" || "$status" == *not-installed ]] || fail "after purge dpkg says '$status'"
left=()
for p in /var/lib/xconn /etc/xconn /usr/lib/xconn /usr/bin/xconnd /usr/bin/xconnctl /lib/systemd/system/xconnd.service \
  /lib/systemd/system/xconnd@.service /etc/systemd/system/multi-user.target.wants/xconnd.service \
  /etc/systemd/system/xconnd.service /var/lib/systemd/deb-systemd-helper-enabled/xconnd.service.dsh-also \
  /var/lib/systemd/deb-systemd-helper-masked/xconnd.service; do
  [ ! -e "$root$p" ] && [ ! -L "$root$p" ] || left+=("$p")
done
((${#left[@]} == 0)) || fail "purge left ${left[*]}"
log "purged: no file of xconn left (the system user xconn stays, as Debian keeps system users)"
log "apt-get autoclean (the kept .debs)"
timeout 120 "${in_root[@]}" apt-get -q autoclean >/dev/null 2>&1 || true
result=PASS

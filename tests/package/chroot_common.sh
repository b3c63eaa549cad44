# Sourced (not run) by chroot_install.sh and image_emulation.sh: a fresh Debian 12 root under /tmp, the same way
# for both. Before sourcing, the script sets `me` (the name on its last line) and has checked its arguments;
# sourcing checks for root, moves into private mount and PID namespaces, makes the scratch folder and arms the
# cleanup. Then chroot_base makes the root (see the XCONN_* settings in chroot_install.sh's header).
# Every exit path stops the daemon and the helper, unmounts and removes the scratch folder; the last line is
# `$me: PASS` or `$me: FAIL: <why>`.
# shellcheck shell=bash
me=${me:?set me before sourcing chroot_common.sh}

if [ "$(id -u)" -ne 0 ]; then
  echo "$me: FAIL: needs root (debootstrap, chroot, mount)" >&2
  exit 2
fi

# Run in private mount and PID namespaces when the host allows them: then every mount made here and every
# process started here (the daemon too) vanish with this script, even if it is killed outright.
if [ -z "${XCONN_CHROOT_INNER:-}" ]; then
  if unshare --mount --pid --fork true 2>/dev/null; then
    XCONN_CHROOT_INNER=1 exec unshare --mount --pid --fork --mount-proc --propagation private --kill-child -- "$0" "$@"
  fi
  echo "$me: no mount or PID namespace here; cleaning up by hand only" >&2
fi

mirror=${XCONN_DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache=${XCONN_CI_CACHE-/var/cache/xconn-ci}
suite=bookworm
arch=$(dpkg --print-architecture)
started=$(date +%s)
work=$(mktemp -d /tmp/xconn-chroot.XXXXXX)
root="$work/root"
daemon_pid=""
helper_pid="" # a process beside the daemon (chroot_install's NOTIFY_SOCKET listener)
step_log=""   # the log of the step under way, shown when it fails
result=""
reason="interrupted"

log() { echo "[$(($(date +%s) - started))s] $*"; }
fail() {
  reason="$*"
  exit 1
}
# A command inside the chroot, with a clean environment (plus the host's proxy settings, if any).
# shellcheck disable=SC2034 # for the sourcing script
in_root=(chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8
  DEBIAN_FRONTEND=noninteractive ${http_proxy:+http_proxy=$http_proxy} ${https_proxy:+https_proxy=$https_proxy})
# Mount points below a folder (not the folder itself), deepest first.
mounts_below() { findmnt -rn -o TARGET | grep -E "^$1/" | sort -r || true; }
show_tail() { [ -f "$1" ] && tail -n "${2:-25}" "$1" | sed 's/^/    | /' || true; }
port_free() { python3 -c 'import socket, sys; socket.socket().bind(("127.0.0.1", int(sys.argv[1])))' "$1" 2>/dev/null; }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# stop_daemon SECONDS [PID]: SIGTERM to PID (default: the daemon), then the daemon's exit status in daemon_rc;
# fails unless it has exited within SECONDS.
# shellcheck disable=SC2034 # daemon_rc is for the caller
stop_daemon() {
  local deadline=$(($(date +%s) + $1))
  kill -TERM "${2:-$daemon_pid}"
  while kill -0 "$daemon_pid" 2>/dev/null; do
    # A zombie (exited, not reaped yet) still answers kill -0: its state says it is gone.
    [ "$(cut -d' ' -f3 "/proc/$daemon_pid/stat" 2>/dev/null)" != Z ] || break
    (($(date +%s) < deadline)) || fail "xconnd did not stop within $1 s of SIGTERM"
    sleep 0.1
  done
  daemon_rc=0
  wait "$daemon_pid" || daemon_rc=$?
  daemon_pid=""
}

cleanup() {
  local status=$?
  set +e
  trap - INT TERM HUP ERR
  if [ -n "$daemon_pid" ] && kill -0 "$daemon_pid" 2>/dev/null; then
    kill -KILL "$daemon_pid"
    wait "$daemon_pid" 2>/dev/null
  fi
  if [ -n "$helper_pid" ]; then
    kill "$helper_pid" 2>/dev/null
    wait "$helper_pid" 2>/dev/null
  fi
  if [ "$result" != PASS ] && [ -s "$step_log" ]; then
    echo "  last lines of ${step_log##*/}:"
    show_tail "$step_log"
  fi
  local m
  log "cleaning up"
  for m in $(mounts_below "$work"); do umount "$m" 2>/dev/null || umount -l "$m"; done
  if [ -n "$(mounts_below "$work")" ]; then
    echo "  still mounted under $work, leaving it: $(mounts_below "$work" | tr '\n' ' ')"
  elif [ "${XCONN_KEEP_CHROOT:-}" = 1 ]; then
    echo "  kept $work"
  else
    # --one-file-system: never into a mount, should one have appeared since the check.
    rm -rf --one-file-system "$work"
    log "removed $work"
  fi
  local took=$(($(date +%s) - started))
  if [ "$result" = PASS ] && [ "$status" -eq 0 ]; then
    echo "$me: PASS (${took}s)"
  else
    echo "$me: FAIL: $reason (${took}s)"
    [ "$status" -ne 0 ] || status=1
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'reason="interrupted by a signal"; exit 1' INT TERM HUP
trap 'reason="line $LINENO failed: $BASH_COMMAND"' ERR

mkdir "$root"
available_kib=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)
if [ "${XCONN_CHROOT_TMPFS:-1}" != 0 ] && ((available_kib > 3 * 1024 * 1024)); then
  mount -t tmpfs -o size=3g,mode=0755 xconn-chroot "$root"
  log "the chroot lives in a tmpfs at $root"
fi

# A Debian 12 root at $root, from the cached base when there is one; apt pointed at the mirror, no service may
# start (policy-rc.d), /proc and /dev mounted, and apt's downloads kept in the cache.
chroot_base() {
  local base=""
  [ -z "$cache" ] || base="$cache/$suite-minbase-$arch.tar.gz"
  if [ -n "$base" ] && [ -f "$base" ] && [ -n "$(find "$base" -mtime -7)" ]; then
    log "unpacking the cached $suite base ($base)"
    timeout 300 tar -C "$root" --numeric-owner -xpzf "$base" || fail "cannot unpack $base"
  else
    log "debootstrap --variant=minbase $suite from $mirror"
    step_log="$work/debootstrap.log"
    timeout 1200 debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
      fail "debootstrap failed or took over 20 minutes"
    [ -z "$(mounts_below "$root")" ] || fail "debootstrap left mounts behind: $(mounts_below "$root" | tr '\n' ' ')"
    if [ -n "$base" ]; then
      rm -f "$root"/var/cache/apt/archives/*.deb
      mkdir -p "$cache"
      if timeout 300 tar -C "$root" --numeric-owner --one-file-system -cpzf "$base.$$.tmp" . &&
        mv "$base.$$.tmp" "$base"; then
        log "cached the base as $base"
      else
        rm -f "$base.$$.tmp"
        log "could not cache the base (going on)"
      fi
    fi
  fi
  echo "deb $mirror $suite main" >"$root/etc/apt/sources.list"
  cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
  printf '#!/bin/sh\n# %s: no service starts in this chroot\nexit 101\n' "$me" >"$root/usr/sbin/policy-rc.d"
  chmod 0755 "$root/usr/sbin/policy-rc.d"
  mount -t proc proc "$root/proc"
  mount --rbind /dev "$root/dev"
  mount --make-rslave "$root/dev"
  if [ -n "$cache" ]; then
    # The .debs apt fetches are kept for the next run.
    mkdir -p "$cache/apt-archives/partial"
    mount --bind "$cache/apt-archives" "$root/var/cache/apt/archives"
  fi
}

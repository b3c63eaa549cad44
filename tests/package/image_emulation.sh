#!/usr/bin/env bash
# The container image's build and run, emulated without a registry (none is reachable from CI, so no base image
# can be pulled): deploy/container/Containerfile's own instructions, read from it by check_containerfile.py's
# parser, are applied to a fresh Debian 12 root (debootstrap --variant=minbase bookworm, which is what
# debian:12-slim is made from), as root: COPY takes the .deb from a build context holding only it, each RUN is
# `/bin/sh -c` inside the chroot with a build's environment, policy-rc.d forbids services (as in Debian's
# images). Then the image runs as deploy/kubernetes/base/statefulset.yaml runs it: the CMD as PID 1 of its own
# PID namespace, as runAsUser:runAsGroup with fsGroup, no capability and no new privileges, in the WORKDIR, on a
# read-only view of the root (readOnlyRootFilesystem) with each VOLUME an empty, fsGroup-owned folder, the echo
# set's xconnd.yaml at the ConfigMap's mount (listening on a free 127.0.0.1 port instead of 0.0.0.0:8840), a
# generated sealing key at the Secret's mount (root, group fsGroup, its defaultMode) and a generated API key in
# the environment. Checked: the user the Containerfile makes (uid and gid = runAsUser and runAsGroup) is the one
# user the build added and the postinst kept it and gave it /var/lib/xconn; /livez and /readyz answer 200 with no
# key within the startup probe's time, echo's health 200 with the key (401 without); the process is PID 1 with
# the pod's uid, gids and no capability; SIGTERM stops it with status 0 within the grace period.
# Not emulated: the seccomp profile, the cgroup limits, the Debian image's dpkg excludes and apt settings, the
# pod's network (xconnd shares the host's, on loopback only), the preStop (only its program is looked for).
#
# usage: tests/package/image_emulation.sh DEB             (as root: chroot, mounts and namespaces)
#        tests/package/image_emulation.sh --dry-run [DEB] (anyone: print the steps and the run, do nothing)
# Settings as for tests/package/chroot_install.sh (XCONN_DEBIAN_MIRROR, XCONN_CI_CACHE, XCONN_CHROOT_TMPFS,
# XCONN_KEEP_CHROOT); the base comes from the same cache. The last line is `image_emulation: PASS` or
# `image_emulation: FAIL: <why>`, after the failing step's log.
set -euo pipefail

me=image_emulation
dry_run=0
if [ "${1:-}" = --dry-run ]; then
  dry_run=1
  shift
fi
if [ $# -gt 1 ] || { [ $# -eq 1 ] && [ ! -f "$1" ]; } || { [ $# -eq 0 ] && [ "$dry_run" = 0 ]; }; then
  echo "usage: $0 DEB | --dry-run [DEB]" >&2
  exit 2
fi
src=$(cd "$(dirname "$0")/../.." && pwd)
deb=""
[ $# -eq 0 ] || deb=$(realpath "$1")

# The Containerfile, as check_containerfile.py reads it: INSTRUCTION NUL ARGUMENTS NUL each.
steps=()
mapfile -d '' steps < <(python3 "$src/tests/deploy/check_containerfile.py" --source "$src" --steps)
if ((${#steps[@]} == 0 || ${#steps[@]} % 2)); then
  echo "$me: FAIL: no instructions read from deploy/container/Containerfile" >&2
  exit 1
fi

# How the StatefulSet runs the image, as shell assignments (evaluated below).
k8s_facts='import shlex, sys, yaml
with open(sys.argv[1], encoding="utf-8") as f:
    sts = next(d for d in yaml.safe_load_all(f) if d and d.get("kind") == "StatefulSet")
pod = sts["spec"]["template"]["spec"]
c = pod["containers"][0]
sc = pod.get("securityContext", {})
volumes = {v["name"]: v for v in pod.get("volumes", [])}
claims = {t["metadata"]["name"] for t in sts["spec"].get("volumeClaimTemplates", [])}
out = {
    "run_uid": sc["runAsUser"], "run_gid": sc.get("runAsGroup", sc["runAsUser"]), "fs_group": sc.get("fsGroup", ""),
    "grace": pod.get("terminationGracePeriodSeconds", 30),
    "read_only_root": str(c.get("securityContext", {}).get("readOnlyRootFilesystem", False)).lower(),
    "startup_s": c["startupProbe"].get("periodSeconds", 10) * c["startupProbe"].get("failureThreshold", 3),
    "key_env": " ".join(e["name"] for e in c.get("env", []) if "secretKeyRef" in e.get("valueFrom", {})),
    "pre_stop": ((c.get("lifecycle", {}).get("preStop", {}).get("exec") or {}).get("command") or [""])[0],
}
for m in c.get("volumeMounts", []):
    v = volumes.get(m["name"], {})
    if m["name"] in claims:
        out["store_path"] = m["mountPath"]
    elif "configMap" in v:
        out["config_path"] = m["mountPath"]
    elif "secret" in v and m.get("subPath"):
        out["key_path"] = m["mountPath"]
        out["key_mode"] = "%04o" % v["secret"].get("defaultMode", 0o644)
for k, v in out.items():
    print(f"{k}={shlex.quote(str(v))}")'
facts=$(python3 -c "$k8s_facts" "$src/deploy/kubernetes/base/statefulset.yaml")
run_uid="" run_gid="" fs_group="" grace="" read_only_root="" startup_s="" key_env="" pre_stop="" store_path=""
config_path="" key_path="" key_mode=""
eval "$facts"
set_config="$src/deploy/kubernetes/echo/xconnd.yaml"

if [ "$dry_run" = 1 ]; then
  # Stand-ins for chroot_common.sh's, which the dry run does not source (no root, nothing made).
  log() { echo "$*"; }
  fail() {
    echo "$me: FAIL: $*"
    exit 1
  }
  root=/ROOT
  work=/WORK
else
  # shellcheck source=tests/package/chroot_common.sh
  . "$(dirname "$0")/chroot_common.sh"
  log "a Debian 12 root for the build"
  chroot_base
  # The build context, as the Containerfile's header has it: a folder holding the one .deb.
  mkdir "$work/context"
  cp "$deb" "$work/context/"
  cp "$root/etc/passwd" "$work/passwd.base"
  cp "$root/etc/group" "$work/group.base"
fi
context="$work/context"
# A build's environment: Docker's and Podman's PATH and HOME for root (root's home in the image's own passwd),
# nothing else (DEBIAN_FRONTEND is the Containerfile's to set), plus the host's proxy settings, if any.
root_home=$(awk -F: '$3 == 0 {print $6; exit}' "$root/etc/passwd" 2>/dev/null || true)
build_env=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "HOME=${root_home:-/}"
  ${http_proxy:+http_proxy=$http_proxy} ${https_proxy:+https_proxy=$https_proxy})
# An exec-form (JSON) argument list, NUL-separated, or nothing if it is not one.
json_list() { python3 -c 'import json, sys
try:
    v = json.loads(sys.argv[1])
except ValueError:
    sys.exit(1)
if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
    sys.exit(1)
sys.stdout.write("".join(x + "\0" for x in v))' "$1"; }

# --- the build: the Containerfile's instructions in order ---------------------------------------------------
froms=0 user="" workdir=/ volumes=() exposed=() cmd=()
for ((i = 0; i < ${#steps[@]}; i += 2)); do
  instruction=${steps[i]} args=${steps[i + 1]} n=$((i / 2 + 1))
  case "$instruction" in
    FROM)
      froms=$((froms + 1))
      case "$args" in
        debian:12-slim | debian:bookworm-slim) ;;
        *) fail "FROM $args: only debian:12-slim is emulated (a bookworm minbase root)" ;;
      esac
      ((froms == 1)) || fail "a second FROM: multi-stage builds are not emulated"
      log "step $n: FROM $args: a debootstrap --variant=minbase bookworm root"
      ;;
    COPY)
      [[ "$args" != -* && "$args" != \[* ]] || fail "COPY $args: options and the JSON form are not emulated"
      read -r -a words <<<"$args"
      ((${#words[@]} >= 2)) || fail "COPY $args: no source or no destination"
      dest=${words[-1]}
      [[ "$dest" == /* ]] || dest="${workdir%/}/$dest"
      log "step $n: COPY ${words[*]:0:${#words[@]}-1} from the build context (${deb:-the .deb} alone) to $dest"
      [ "$dry_run" = 0 ] || continue
      sources=()
      for pattern in "${words[@]:0:${#words[@]}-1}"; do
        [[ "$pattern" != *..* ]] || fail "COPY $pattern: outside the build context"
        shopt -s nullglob
        # shellcheck disable=SC2206 # the pattern is a glob, as COPY reads it
        matched=("$context"/$pattern)
        shopt -u nullglob
        ((${#matched[@]})) || fail "COPY $pattern: nothing in the build context ($(basename "$deb")) matches"
        sources+=("${matched[@]}")
      done
      if [[ "$dest" == */ ]]; then
        mkdir -p "$root$dest"
      else
        ((${#sources[@]} == 1)) || fail "COPY of several files to $dest, which does not end in /"
        mkdir -p "$(dirname "$root$dest")"
      fi
      cp --preserve=mode "${sources[@]}" "$root$dest"
      for s in "${sources[@]}"; do
        target=$root$dest
        [[ "$dest" != */ ]] || target=$root$dest$(basename "$s")
        chown 0:0 "$target"
        log "  $(basename "$s") -> ${target#"$root"}"
      done
      ;;
    RUN)
      [[ "$args" != \[* ]] || fail "RUN $args: the JSON form is not emulated"
      [ -z "$user" ] || fail "RUN after USER $user: the emulation runs every RUN as root"
      log "step $n: RUN /bin/sh -c '$args' (in $workdir, as root)"
      [ "$dry_run" = 0 ] || continue
      step_log="$work/step$n.log"
      timeout 900 chroot "$root" /usr/bin/env -i -C "$workdir" "${build_env[@]}" /bin/sh -c "$args" >"$step_log" 2>&1 ||
        fail "step $n (RUN ${args:0:60}...) failed or took over 15 minutes"
      grep -E '^(Fetched|Setting up xconn|Need to get)' "$step_log" | sed 's/^/    /' || true
      ;;
    WORKDIR)
      if [[ "$args" == /* ]]; then workdir=$args; else workdir="${workdir%/}/$args"; fi
      log "step $n: WORKDIR $workdir (later RUNs and the CMD run there)"
      [ "$dry_run" = 1 ] || mkdir -p "$root$workdir"
      ;;
    USER)
      user=$args
      log "step $n: USER $user (checked against the StatefulSet's runAsUser:runAsGroup, $run_uid:$run_gid)"
      ;;
    VOLUME)
      if json_list "$args" >/dev/null; then
        mapfile -d '' more < <(json_list "$args")
      else
        read -r -a more <<<"$args"
      fi
      volumes+=("${more[@]}")
      log "step $n: VOLUME ${more[*]} (at run time: an empty folder, fsGroup's, as a new volume)"
      ;;
    EXPOSE)
      read -r -a more <<<"$args"
      exposed+=("${more[@]%/tcp}")
      log "step $n: EXPOSE $args (at run time: the set's listen port must be one of them)"
      ;;
    CMD)
      if json_list "$args" >/dev/null; then
        mapfile -d '' cmd < <(json_list "$args")
      else
        cmd=(/bin/sh -c "$args")
      fi
      log "step $n: CMD ${cmd[*]} (the process run, PID 1)"
      ;;
    LABEL) log "step $n: LABEL (nothing to do)" ;;
    HEALTHCHECK) log "step $n: HEALTHCHECK (Kubernetes ignores it; it probes /livez and /readyz)" ;;
    *) fail "step $n: $instruction is not emulated (tests/package/image_emulation.sh would have to learn it)" ;;
  esac
done
((${#cmd[@]})) || fail "no CMD"
[ -n "$user" ] || fail "no USER: the image would run as root"
for fact in store_path config_path key_path key_env; do
  [ -n "${!fact}" ] || fail "no $fact found in the StatefulSet"
done
printf '%s\n' "${volumes[@]}" | grep -qxF "$store_path" || fail "the StatefulSet's store $store_path is no VOLUME"
listen_port=$(python3 -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["server"]["listen"].rsplit(":", 1)[1])' \
  "$set_config")
printf '%s\n' "${exposed[@]}" | grep -qxF "$listen_port" || fail "the echo set listens on $listen_port, not EXPOSEd"
run_as="$run_uid:$run_gid, groups $fs_group, no capability, no new privileges, PID 1"
run_plan="run: ${cmd[*]} as $run_as, in $workdir, root file system read-only: $read_only_root;
  ${volumes[*]} empty (root:$fs_group 2775); $config_path = ${set_config#"$src"/} on 127.0.0.1:<free port>;
  $key_path generated (root:$fs_group $key_mode); $key_env generated; /livez and /readyz within ${startup_s} s,
  echo's health with the key, SIGTERM: status 0 within ${grace} s"
if [ "$dry_run" = 1 ]; then
  echo "$run_plan"
  echo "$me: dry run: $((${#steps[@]} / 2)) instructions, nothing run"
  exit 0
fi

# --- the image, as built -------------------------------------------------------------------------------------
step_log=""
status=$("${in_root[@]}" dpkg-query -W -f='${Status} ${Version}' xconn 2>/dev/null) || status="not installed"
[[ "$status" == "install ok installed "* ]] || fail "after the build dpkg says xconn is '$status'"
log "built: xconn $status"
# The users and groups the build added, by name: the Containerfile's xconn only (the postinst made no second one).
new_users=$(cut -d: -f1 "$root/etc/passwd" | grep -vxF -f <(cut -d: -f1 "$work/passwd.base") || true)
new_groups=$(cut -d: -f1 "$root/etc/group" | grep -vxF -f <(cut -d: -f1 "$work/group.base") || true)
[ "$new_users" = xconn ] || fail "the build added the users '$(echo "$new_users" | tr '\n' ' ')', expected xconn alone"
[ "$new_groups" = xconn ] || fail "the build added the groups '$(echo "$new_groups" | tr '\n' ' ')', expected xconn alone"
IFS=: read -r _ _ uid gid _ home shell < <(grep '^xconn:' "$root/etc/passwd")
log "user: xconn $uid:$gid, home $home, shell $shell; group xconn $(grep '^xconn:' "$root/etc/group" | cut -d: -f3)"
[ "$uid:$gid" = "$run_uid:$run_gid" ] || fail "xconn is $uid:$gid, the StatefulSet runs as $run_uid:$run_gid"
[ "$(grep '^xconn:' "$root/etc/group" | cut -d: -f3)" = "$run_gid" ] || fail "the group xconn is not $run_gid"
((fs_group == run_gid)) || fail "fsGroup $fs_group is not xconn's group $run_gid"
[ "$(awk -F: -v u="$uid" '$3 == u' "$root/etc/passwd" | wc -l)" = 1 ] || fail "another user has xconn's uid $uid"
case "$user" in
  "$run_uid:$run_gid" | "$run_uid") ;;
  xconn | xconn:xconn) log "USER names xconn: Kubernetes' runAsNonRoot needs the number (runAsUser has it)" ;;
  *) fail "USER $user is not xconn ($run_uid:$run_gid), which the StatefulSet runs as" ;;
esac
owner=$(stat -c '%u:%g %a' "$root/var/lib/xconn") || fail "no /var/lib/xconn in the image"
[ "$owner" = "$run_uid:$run_gid 750" ] || fail "the image's /var/lib/xconn is $owner, expected $run_uid:$run_gid 750"
log "/var/lib/xconn in the image: $owner (the postinst chowned it to the kept xconn)"
[ -z "$(find "$root/var/lib/apt/lists" -mindepth 1 -maxdepth 1 ! -name lock ! -name partial 2>/dev/null)" ] ||
  fail "the apt lists stayed in the image"
! compgen -G "$root/tmp/*.deb" >/dev/null || fail "the copied .deb stayed in the image"
[ -z "$pre_stop" ] || chroot "$root" /usr/bin/env -i "${build_env[@]}" sh -c 'command -v "$1"' sh "$pre_stop" >/dev/null ||
  fail "the preStop's $pre_stop is not in the image"

# --- the run, as the StatefulSet makes it --------------------------------------------------------------------
# The apt cache mount is the build's, no part of the image.
! mountpoint -q "$root/var/cache/apt/archives" || umount "$root/var/cache/apt/archives"
port=$(free_port)
mkdir "$work/mounts"
sed -E "s|^(  listen: *)\"[^\"]*\"|\\1\"127.0.0.1:$port\"|" "$set_config" >"$work/mounts/xconnd.yaml"
[ "$(python3 -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["server"]["listen"])' \
  "$work/mounts/xconnd.yaml")" = "127.0.0.1:$port" ] || fail "cannot move the echo set's listen to 127.0.0.1:$port"
chmod 0644 "$work/mounts/xconnd.yaml"
# The Secret's file: root's, group fsGroup, its defaultMode; a key as docs/operations.md makes one.
python3 -c 'import secrets; print(secrets.token_hex(32), end="")' >"$work/mounts/sealing_key"
chown "0:$fs_group" "$work/mounts/sealing_key"
chmod "$key_mode" "$work/mounts/sealing_key"
api_key=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
# The runtime makes the mount points, in the image's root, before it is read-only.
[ -e "$root$key_path" ] || install -D -m 0644 /dev/null "$root$key_path"
[ -e "$root$config_path" ] || fail "no $config_path in the image to mount the configuration over"
sandbox="$work/sandbox"
mkdir "$sandbox"
mount --rbind "$root" "$sandbox"
mount --make-rslave "$sandbox"
[ "$read_only_root" != true ] || mount -o remount,bind,ro "$sandbox"
v=0
for volume in "${volumes[@]}"; do
  # A new volume's root after the kubelet's fsGroup change: root's, group fsGroup, setgid, with lost+found
  # (an ext4 volume's), nothing of the image's folder.
  v=$((v + 1))
  mkdir -m 2775 "$work/volume$v"
  mkdir -m 0700 "$work/volume$v/lost+found"
  chown "0:$fs_group" "$work/volume$v"
  chmod 2775 "$work/volume$v"
  mount --bind "$work/volume$v" "$sandbox$volume"
  [ "$volume" != "$store_path" ] || store_dir="$work/volume$v"
done
# subPath mounts, readOnly: bind mounts of one file each.
for pair in "xconnd.yaml:$config_path" "sealing_key:$key_path"; do
  mount --bind "$work/mounts/${pair%%:*}" "$sandbox${pair#*:}"
  mount -o remount,bind,ro "$sandbox${pair#*:}"
done
if [ "$read_only_root" = true ]; then
  if touch "$sandbox/etc/.rw-probe" 2>/dev/null; then fail "the root is writable"; fi
  if touch "$sandbox/tmp/.rw-probe" 2>/dev/null; then fail "/tmp is writable"; fi
fi
if touch "$sandbox$config_path" 2>/dev/null; then fail "$config_path is writable"; fi
log "volumes ${volumes[*]} empty and root:$fs_group 2775; $config_path (127.0.0.1:$port) and $key_path" \
  "(root:$fs_group $key_mode) mounted read-only; root file system read-only: $read_only_root"

home=$(awk -F: -v u="$run_uid" '$3 == u {print $6}' "$root/etc/passwd")
log "starting ${cmd[*]} as $run_as"
# The process as a runtime starts it: PID 1 of a PID namespace (its /proc its own), the image's environment
# (PATH; HOME from the image's passwd) plus the pod's, the user set, then the WORKDIR entered as that user.
unshare --pid --fork --kill-child --mount-proc="$sandbox/proc" \
  chroot "$sandbox" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  HOSTNAME=xconnd-0 HOME="${home:-/}" "$key_env=$api_key" \
  setpriv --reuid="$run_uid" --regid="$run_gid" --groups="$fs_group" --no-new-privs --inh-caps=-all \
  --bounding-set=-all -- /usr/bin/env -C "$workdir" "${cmd[@]}" >"$work/xconnd.log" 2>&1 &
daemon_pid=$!
step_log="$work/xconnd.log"
deadline=$(($(date +%s) + 10))
pid1=""
until [ -n "$pid1" ]; do
  kill -0 "$daemon_pid" 2>/dev/null || fail "the process did not start"
  (($(date +%s) < deadline)) || fail "no process in the new PID namespace within 10 s"
  read -r pid1 _ <"/proc/$daemon_pid/task/$daemon_pid/children" 2>/dev/null || true
  [ -n "$pid1" ] || sleep 0.05
done
code() { curl -s -o "$work/body" -w '%{http_code}' -m 2 "$@" 2>/dev/null || true; }
url="http://127.0.0.1:$port"
launched=$(date +%s.%N)
deadline=$(($(date +%s) + startup_s))
until [ "$(code "$url/livez")" = 200 ] && [ "$(code "$url/readyz")" = 200 ]; do
  kill -0 "$pid1" 2>/dev/null || fail "xconnd exited before it was ready"
  (($(date +%s) < deadline)) || fail "no 200 from both /livez and /readyz within ${startup_s} s (the startup probe's)"
  sleep 0.2
done
log "GET /livez 200, GET /readyz 200 (no key) $(python3 -c 'import sys, time; print(round(time.time() - float(sys.argv[1]), 2))' \
  "$launched") s after the start"
without=$(code "$url/connectors/echo/health")
[ "$without" = 401 ] || fail "echo's health without the key answered $without, expected 401"
with=$(code -H "Authorization: Bearer $api_key" "$url/connectors/echo/health")
[ "$with" = 200 ] || fail "echo's health with \$$key_env answered $with: $(head -c 300 "$work/body")"
log "GET /connectors/echo/health: 401 without the key, 200 with \$$key_env: $(head -c 120 "$work/body")"
status_of() { awk -v k="$1:" '$1 == k {$1 = ""; print substr($0, 2)}' "/proc/$pid1/status"; }
[ "$(status_of Name)" = "$(basename "${cmd[0]}" | cut -c1-15)" ] || fail "PID 1 is $(status_of Name), not ${cmd[0]}"
ids="Uid $(status_of Uid | tr -s '\t ' ' '), Gid $(status_of Gid | tr -s '\t ' ' '), Groups $(status_of Groups | xargs)"
log "the process: $ids, CapEff $(status_of CapEff), NoNewPrivs $(status_of NoNewPrivs), NSpid $(status_of NSpid | xargs)"
[ "$ids" = "Uid $run_uid $run_uid $run_uid $run_uid, Gid $run_gid $run_gid $run_gid $run_gid, Groups $fs_group" ] ||
  fail "the process runs as $ids"
[ "$(status_of CapEff)" = 0000000000000000 ] || fail "the process has capabilities"
[ "$(status_of NSpid | awk '{print $NF}')" = 1 ] || fail "the process is not PID 1 of its namespace"
store_files=(-mindepth 1 -path "$store_dir/lost+found" -prune -o)
log "the store: $(find "$store_dir" "${store_files[@]}" -printf '%P %u:%g %m; ')"
[ -z "$(find "$store_dir" "${store_files[@]}" ! -uid "$run_uid" -print)" ] || fail "the store holds files not $run_uid's"

log "SIGTERM to PID 1"
stop_daemon "$grace" "$pid1"
[ "$daemon_rc" -eq 0 ] || fail "xconnd exited with status $daemon_rc after SIGTERM"
log "xconnd stopped with status 0"
result=PASS

#!/usr/bin/env bash
# Installs what building and testing xconn needs from Debian 12's packages (as root). Skips apt entirely
# when everything is already there.
set -euo pipefail
packages=(
  build-essential cmake git pkg-config
  libboost1.81-dev libboost-json1.81-dev
  libsimdjson-dev libyaml-cpp-dev libspdlog-dev liblmdb-dev libssl-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-jsonschema python3-yaml curl gnuplot-nox openssl ca-certificates tinyproxy microsocks ngircd
  clang libfuzzer-14-dev
  libsystemd-dev systemd dpkg-dev fakeroot lintian debootstrap prometheus
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

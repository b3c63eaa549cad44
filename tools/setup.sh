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
  libsystemd-dev systemd dpkg-dev fakeroot lintian debootstrap prometheus nodejs
)
# NodeSource's nodejs carries its own npm (and conflicts with Debian's); Debian's nodejs needs the npm package.
command -v npm > /dev/null || packages+=(npm)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The Kubernetes manifests' checks (tests/deploy/check_kubernetes.js) need the API schemas from npm; installed once,
# again only when package-lock.json changes.
deploy_tests="$(dirname "$0")/../tests/deploy"
if ! [ "$deploy_tests/node_modules/.package-lock.json" -nt "$deploy_tests/package-lock.json" ]; then
  npm ci --prefix "$deploy_tests" --no-audit --no-fund --prefer-offline --loglevel=error
fi

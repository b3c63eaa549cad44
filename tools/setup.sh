#!/usr/bin/env bash
# Installs what building and testing xconn needs from Debian 12's packages (as root). Skips apt entirely
# when everything is already there.
#
#   tools/setup.sh           install what is missing, then the deploy checks' npm packages
#   tools/setup.sh --check   install nothing; exit 1 naming the stage and the package when a file a stage links or
#                            runs is not installed, or comes from a package this list does not install (tools/test.sh
#                            runs it first, so a gap in the list fails CI rather than a newcomer's first run)
set -euo pipefail
packages=(
  build-essential cmake git pkg-config
  libboost1.81-dev libboost-json1.81-dev
  libsimdjson-dev libyaml-cpp-dev libspdlog-dev liblmdb-dev libssl-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-jsonschema python3-yaml python3-cryptography curl gnuplot-nox openssl ca-certificates tinyproxy microsocks ngircd
  clang libclang-rt-14-dev libfuzzer-14-dev
  libsystemd-dev systemd dpkg-dev fakeroot lintian debootstrap prometheus nodejs
)
# NodeSource's nodejs carries its own npm (and conflicts with Debian's); Debian's nodejs needs the npm package.
command -v npm > /dev/null || packages+=(npm)

# What each stage links or runs: "stage package file", the package being the one that carries the file on Debian 12
# (dpkg -S). --check holds every file to the packages above and what they depend on: clang's runtimes, for one, come
# from libclang-rt-14-dev, which clang only recommends, so --no-install-recommends never brought them.
needs=(
  "build   cmake                  /usr/bin/cmake"
  "build   make                   /usr/bin/make"
  "build   g++                    /usr/bin/g++"
  "build   pkgconf                /usr/bin/pkg-config"
  "build   git                    /usr/bin/git"
  "build   libboost1.81-dev       /usr/include/boost/version.hpp"
  "build   libboost-json1.81-dev  /usr/lib/x86_64-linux-gnu/cmake/boost_json-1.81.0/boost_json-config.cmake"
  "build   libsimdjson-dev        /usr/lib/x86_64-linux-gnu/cmake/simdjson/simdjson-config.cmake"
  "build   libyaml-cpp-dev        /usr/lib/x86_64-linux-gnu/cmake/yaml-cpp/yaml-cpp-config.cmake"
  "build   libspdlog-dev          /usr/lib/x86_64-linux-gnu/cmake/spdlog/spdlogConfig.cmake"
  "build   liblmdb-dev            /usr/lib/x86_64-linux-gnu/pkgconfig/lmdb.pc"
  "build   libssl-dev             /usr/lib/x86_64-linux-gnu/libssl.so"
  "build   libsystemd-dev         /usr/lib/x86_64-linux-gnu/pkgconfig/libsystemd.pc"
  "build   libgtest-dev           /usr/lib/x86_64-linux-gnu/cmake/GTest/GTestConfig.cmake"
  "build   libgmock-dev           /usr/lib/x86_64-linux-gnu/cmake/GTest/GMockTargets.cmake"
  "build   libbenchmark-dev       /usr/lib/x86_64-linux-gnu/cmake/benchmark/benchmarkConfig.cmake"
  "test    python3-minimal        /usr/bin/python3"
  "test    python3-jsonschema     /usr/lib/python3/dist-packages/jsonschema/__init__.py"
  "test    python3-yaml           /usr/lib/python3/dist-packages/yaml/__init__.py"
  "test    python3-cryptography   /usr/lib/python3/dist-packages/cryptography/__init__.py"
  "test    openssl                /usr/bin/openssl"
  "test    ca-certificates        /usr/sbin/update-ca-certificates"
  "test    tinyproxy-bin          /usr/bin/tinyproxy"
  "test    microsocks             /usr/bin/microsocks"
  "test    ngircd                 /usr/sbin/ngircd"
  "test    prometheus             /usr/bin/promtool"
  "test    nodejs                 /usr/bin/node"
  "setup   npm                    /usr/bin/npm"
  "package dpkg-dev               /usr/bin/dpkg-shlibdeps"
  "package lintian                /usr/bin/lintian"
  "package systemd                /usr/bin/systemd-analyze"
  "package debootstrap            /usr/sbin/debootstrap"
  "package curl                   /usr/bin/curl"
  "asan    libgcc-12-dev          /usr/lib/gcc/x86_64-linux-gnu/12/libasan.so"
  "asan    libgcc-12-dev          /usr/lib/gcc/x86_64-linux-gnu/12/libubsan.so"
  "fuzz    clang                  /usr/bin/clang++"
  "fuzz    libclang-rt-14-dev     /usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.fuzzer-x86_64.a"
  "fuzz    libclang-rt-14-dev     /usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.asan-x86_64.a"
  "fuzz    libclang-rt-14-dev     /usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.ubsan_standalone-x86_64.a"
  "bench   gnuplot-nox            /usr/bin/gnuplot-nox"
)

# Each toolchain stage links a one-line program the way its build does; every file the linker opens (ld --trace)
# must come from the list too, so a runtime that a new flag pulls in is caught without editing the table above.
link_probes=(
  "build|g++|-pthread -lboost_json -lyaml-cpp -lspdlog -lsimdjson -lssl -lcrypto -llmdb -lsystemd -lgtest -lgmock -lbenchmark"
  "asan|g++|-fsanitize=address,undefined -fno-sanitize-recover=undefined"
  "fuzz|clang++|-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all"
)

# The packages installed here (on a fresh machine, after this script) that the list brings with --no-install-recommends:
# the listed ones, Debian's Essential set, and what they Depend or Pre-Depend on (of alternatives, the installed one
# that comes first), one per line.
installed_closure() {
  dpkg-query -W -f='${db:Status-Abbrev}\t${Package}\t${Essential}\t${Pre-Depends}, ${Depends}\t${Provides}\n' |
    awk -F'\t' -v roots="${packages[*]}" '
      $1 !~ /^ii/ { next }
      { installed[$2] = 1; deps[$2] = $4; if ($3 == "yes") essential[$2] = 1
        n = split($5, provided, /, */)
        for (i = 1; i <= n; i++) { p = provided[i]; sub(/[ :(].*/, "", p); if (p != "" && !(p in provider)) provider[p] = $2 } }
      function real(name) { sub(/:.*/, "", name); if (name in installed) return name; if (name in provider) return provider[name]; return "" }
      END {
        n = split(roots, queue, " "); for (p in essential) queue[++n] = p
        for (i = 1; i <= n; i++) {
          p = real(queue[i]); if (p == "" || (p in seen)) continue
          seen[p] = 1; print p
          groups = split(deps[p], group, /, */)
          for (g = 1; g <= groups; g++) {
            alts = split(group[g], alt, / *\| */)
            for (a = 1; a <= alts; a++) { name = alt[a]; gsub(/^ +| .*$/, "", name); if (real(name) != "") { queue[++n] = name; break } }
          }
        }
      }'
}

# Fills owners[FILE] with the package that owns each FILE given (dpkg -S, one query for all: each takes most of a
# second), trying the /usr-merged twin and the resolved symlink too; a file no package owns gets no entry.
declare -A owners
resolve_owners() {
  local file candidate line package
  local -A candidates=() owner_of_path=() twins_of=()
  for file in "$@"; do
    twins_of[$file]="$file ${file#/usr} /usr$file $(readlink -f "$file")"
    for candidate in ${twins_of[$file]}; do [[ -e $candidate ]] && candidates[$candidate]=1; done
  done
  ((${#candidates[@]})) || return 0
  while IFS= read -r line; do
    package=${line%%: /*}
    package=${package%%,*}
    owner_of_path[/${line#*: /}]=${package%%:*}
  done < <(dpkg-query -S "${!candidates[@]}" 2>/dev/null || true)
  for file in "$@"; do
    for candidate in ${twins_of[$file]}; do
      if [[ -n ${owner_of_path[$candidate]:-} ]]; then
        owners[$file]=${owner_of_path[$candidate]}
        break
      fi
    done
  done
}

# Prints one line per file a stage needs that is missing or comes from a package the list does not bring.
check() {
  local closure listed problems=0 line stage package file owner
  closure=" $(installed_closure | tr '\n' ' ') "
  listed=" ${packages[*]} "
  local -a wanted=() # "stage file package": package is what to name when no installed package owns the file
  local -A named=()
  for line in "${needs[@]}"; do
    read -r stage package file <<<"$line"
    if [[ ! -e $file ]]; then
      if [[ $listed != *" $package "* && $closure != *" $package "* ]]; then
        echo "setup --check: stage $stage needs package $package (for $file), which tools/setup.sh does not install"
      else
        echo "setup --check: stage $stage needs package $package (for $file), not installed: run tools/setup.sh"
      fi
      problems=$((problems + 1))
    else
      wanted+=("$stage $file $package")
      named["$stage $file"]=1
    fi
  done

  local probe compiler flags source scratch log
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' RETURN
  echo 'int main() { return 0; }' >"$scratch/program.cpp"
  echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' >"$scratch/fuzz.cpp"
  for probe in "${link_probes[@]}"; do
    IFS='|' read -r stage compiler flags <<<"$probe"
    source=$scratch/program.cpp
    [[ $stage == fuzz ]] && source=$scratch/fuzz.cpp
    log=$scratch/$stage.log
    # The compiler's own temporary object goes to the scratch directory, which the trace leaves out.
    # shellcheck disable=SC2086 # the flags are words
    if ! TMPDIR=$scratch "$compiler" "$source" -o "$scratch/$stage" $flags -Wl,--trace >"$log" 2>&1; then
      echo "setup --check: stage $stage cannot link ($compiler $flags):"
      grep -E 'cannot find|not found|error' "$log" | head -n 5 | sed 's/^/    /'
      problems=$((problems + 1))
      continue
    fi
    while IFS= read -r file; do
      [[ -n ${named["$stage $file"]:-} ]] || wanted+=("$stage $file -")
    done < <(grep -E '^/' "$log" | grep -v "^$scratch/" | xargs -r realpath -s | sort -u)
  done

  local -a files=()
  for line in "${wanted[@]}"; do
    read -r stage file package <<<"$line"
    files+=("$file")
  done
  resolve_owners "${files[@]}"
  for line in "${wanted[@]}"; do
    read -r stage file package <<<"$line"
    owner=${owners[$file]:-}
    if [[ -z $owner ]]; then
      echo "setup --check: stage $stage needs $file, which no package owns$([[ $package == - ]] || echo " (expected $package)")"
      problems=$((problems + 1))
    elif [[ $closure != *" $owner "* ]]; then
      echo "setup --check: stage $stage needs package $owner (for $file), which tools/setup.sh does not install"
      problems=$((problems + 1))
    fi
  done
  if ((problems)); then
    echo "setup --check: $problems problem(s)"
    return 1
  fi
  echo "setup --check: every stage's files come from the installed list (${#needs[@]} named, ${#link_probes[@]} links traced)"
}

if [[ ${1:-} == --check ]]; then
  check
  exit
fi

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

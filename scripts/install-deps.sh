#!/usr/bin/env bash
# Installs the Debian 12 packages the build, the tests and the quick start need, if missing
# (Chromium for the WebUI's browser test; the WebUI itself needs the machine's Node.js 20.19+ and
# npm, which Debian 12's own nodejs is too old for). Idempotent and quiet when everything is
# already there. Needs root (or sudo).
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git python3
  clang clang-format clang-tidy libclang-rt-14-dev lld ccache
  libzmq3-dev cppzmq-dev libmsgpack-cxx-dev libpqxx-dev libyaml-cpp-dev libcurl4-openssl-dev
  libssl-dev libpugixml-dev libspdlog-dev nlohmann-json3-dev libcli11-dev libcpp-httplib-dev libarchive-dev
  libboost-dev zlib1g-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  postgresql openssl wrk nginx-light awscli
  chromium fonts-liberation
  # The private Docker engine's image is a Debian root file system (scripts/docker-test-engine.sh);
  # its private registry's users are an htpasswd file.
  debootstrap apache2-utils
  # Determined 0.38.1's Python library imports these (its trial code runs on this project
  # unmodified: tests/integration/determined_library_test.cc).
  python3-requests python3-psutil python3-filelock python3-termcolor python3-tabulate
  python3-ruamel.yaml python3-dateutil python3-tz python3-pathspec python3-certifi
  python3-packaging python3-numpy python3-zmq python3-argcomplete python3-openssl
  python3-appdirs python3-tqdm
  # Its S3 checkpoint storage (determined_library_s3_test.cc) imports boto3.
  python3-boto3
  # Its PyTorch Trainer on real PyTorch (determined_pytorch_test.cc: Determined's mnist_pytorch
  # tutorial on CPU).
  python3-torch python3-torchvision
)

# gcloud (the fake Compute Engine's check) is Google's package, not in Debian's archive: installed
# when the machine's apt sources carry it (Google's repository), else the check says it is missing.
OPTIONAL=(google-cloud-cli)

# The Docker engine (dockerd 20.10, and the docker CLI that checks the fake engine:
# tests/integration/fake_docker_cli_test.cc) and Docker's registry, for the real-engine tests;
# Slurm 22.05 and munge, the submit benchmark's baseline (bench/slurm_cluster.h).
# Installed without starting their system services: the tests and benchmarks start private
# daemons of their own (scripts/docker-test-engine.sh, bench/) and stop them by pid.
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
WITHOUT_SERVICES=()
for p in docker.io docker-registry munge slurmctld slurmd slurm-client; do
  installed "$p" || WITHOUT_SERVICES+=("$p")
done

missing=()
for p in "${PACKAGES[@]}"; do
  installed "$p" || missing+=("$p")
done
for p in "${OPTIONAL[@]}"; do
  if ! installed "$p" && apt-cache show "$p" >/dev/null 2>&1; then missing+=("$p"); fi
done
[ ${#missing[@]} -eq 0 ] && [ ${#WITHOUT_SERVICES[@]} -eq 0 ] && exit 0

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
[ ${#missing[@]} -eq 0 ] || echo "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
[ ${#missing[@]} -eq 0 ] || $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
if [ ${#WITHOUT_SERVICES[@]} -gt 0 ]; then
  echo "installing (no service started): ${WITHOUT_SERVICES[*]}"
  policy=/usr/sbin/policy-rc.d
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
    $SUDO chmod +x "$policy"
    trap '$SUDO rm -f "$policy"' EXIT
  fi
  $SUDO apt-get install -y -qq --no-install-recommends "${WITHOUT_SERVICES[@]}" >/dev/null
fi

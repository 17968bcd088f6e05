#!/usr/bin/env bash
# A private Docker engine and two private registries for the docker runtime's real-engine tests
# (tests/integration/docker_runtime_test.cc, `.../real`) and the container start benchmark.
#   scripts/docker-test-engine.sh start DIR   # prepares and starts them; writes DIR/engine.env
#   scripts/docker-test-engine.sh stop DIR    # stops every process it started, by pid
# Needs root and Debian's docker.io, docker-registry, debootstrap and apache2-utils
# (scripts/install-deps.sh). Outside DIR: a short exec-root under /run (containerd's socket paths
# must stay short), removed by `stop`; and what dockerd 20.10 writes wherever it runs: its
# identity /etc/docker/key.json, an empty /run/docker/plugins, shim sockets under
# /run/containerd/s. The system's own dockerd and registry are neither used nor started, nor is its
# /etc/docker/daemon.json read; where a system containerd runs (/run/containerd/containerd.sock),
# dockerd 20.10 uses it rather than one of its own (none runs on the machines this was made for).
#
# The engine: dockerd 20.10 (API 1.41) on DIR/run/docker.sock, vfs storage, no iptables rules, no
# bridge (containers run with host networking or none), data in DIR/data.
# The images, made without Docker Hub: a Debian 12 root file system with python3
# (`debootstrap --variant=minbase`, from the machine's Debian mirror), cached as
# DIR/cache/*.tar so later runs reuse it, imported as det-test/python:3.
# The registries (docker-registry 2.8 on loopback, plain HTTP, which dockerd trusts on 127.0.0.0/8):
#   open     anyone may pull: det-test/pullable:1, removed from the engine so that a test pulls it;
#   private  basic auth (htpasswd, a password drawn per start): det-test/private:1, likewise removed.
# DIR/engine.env (KEY=value lines; the tests read it from <build>/docker-test/engine.env):
#   DET_TEST_DOCKER_SOCKET, DET_TEST_DOCKER_IMAGE, DET_TEST_DOCKER_PULLABLE,
#   DET_TEST_DOCKER_PRIVATE, DET_TEST_DOCKER_REGISTRY (host:port of the private one),
#   DET_TEST_DOCKER_REGISTRY_USER, DET_TEST_DOCKER_REGISTRY_PASSWORD.
# `start` fails (and stops what it started) when any step fails; it never leaves half an engine.
set -euo pipefail

ACTION="${1:-}"
DIR="${2:-}"
if [ -z "$ACTION" ] || [ -z "$DIR" ]; then
  echo "usage: $0 start|stop DIR" >&2
  exit 2
fi
mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"
EXEC_ROOT="/run/det-docker-test-$(printf '%s' "$DIR" | md5sum | head -c 8)"
SOCKET="$DIR/run/docker.sock"
ROOTFS_VERSION=1  # bump when the root file system's recipe below changes
ROOTFS_TAR="$DIR/cache/bookworm-minbase-python3-v$ROOTFS_VERSION.tar"
IMAGE=det-test/python:3

log() { echo "docker-test-engine: $*"; }
docker_cli() { DOCKER_CONFIG="$DIR/cli" docker -H "unix://$SOCKET" "$@"; }
pid_of() { cat "$DIR/pids/$1.pid" 2>/dev/null || true; }
alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null; }
# Whether pid $1 is one this script started for DIR (a stale pid file may name a reused pid).
ours() { tr '\0' ' ' < "/proc/$1/cmdline" 2>/dev/null | grep -qF -e "$DIR" -e "$EXEC_ROOT"; }

# Sends SIGTERM to pid $1 (if it is ours), waits up to $2 seconds, then SIGKILL.
stop_pid() {
  local pid="$1" wait_s="$2"
  alive "$pid" && ours "$pid" || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq $((wait_s * 10))); do
    alive "$pid" || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
}

stop_all() {
  if [ -S "$SOCKET" ]; then
    local ids
    ids="$(docker_cli ps -aq 2>/dev/null || true)"
    [ -z "$ids" ] || docker_cli rm -f $ids >/dev/null 2>&1 || true
    # A network's bridge interface would outlive the engine on the host.
    docker_cli network prune -f >/dev/null 2>&1 || true
  fi
  stop_pid "$(pid_of dockerd)" 30
  stop_pid "$(cat "$EXEC_ROOT/containerd/containerd.pid" 2>/dev/null || true)" 10
  # Shims outlive a killed containerd: ours are those whose command line names our exec-root.
  for pid in $(pgrep -f "containerd-shim.*$EXEC_ROOT" || true); do stop_pid "$pid" 5; done
  for name in registry-open registry-private; do stop_pid "$(pid_of "$name")" 10; done
  # Network namespaces of containers run with --network none stay mounted after a killed engine,
  # and so does the /proc of a debootstrap that was killed.
  unmount_under "$EXEC_ROOT"
  rm -rf "$EXEC_ROOT"
  unmount_under "$DIR/cache"
  rm -rf "$DIR/run" "$DIR/pids" "$DIR/engine.env"
}

# Lazily unmounts whatever is mounted under $1, deepest first.
unmount_under() {
  { grep -o " $1/[^ ]*" /proc/mounts || true; } | sort -r | while read -r mount; do
    umount -l "$mount" 2>/dev/null || true
  done
}

wait_until() {  # wait_until SECONDS WHAT COMMAND...
  local seconds="$1" what="$2"
  shift 2
  for _ in $(seq $((seconds * 10))); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  log "$what did not come up in ${seconds}s"
  return 1
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

random_text() { head -c 18 /dev/urandom | base64 | tr -d '/+='; }

# The Debian 12 root file system with python3, made once and cached.
make_rootfs() {
  [ -s "$ROOTFS_TAR" ] && return 0
  local mirror tree
  mirror="$(grep -hs '^URIs:' /etc/apt/sources.list.d/debian.sources | head -1 | awk '{print $2}')"
  mirror="${mirror:-http://deb.debian.org/debian}"
  tree="$DIR/cache/rootfs.tmp"
  unmount_under "$tree"
  rm -rf "$tree"
  mkdir -p "$DIR/cache"
  log "making the image's root file system (debootstrap from $mirror, about a minute)"
  nice -n 10 debootstrap --variant=minbase --include=python3 bookworm "$tree" "$mirror" \
    > "$DIR/logs/debootstrap.log" 2>&1 || { log "debootstrap failed: $DIR/logs/debootstrap.log"; tail -5 "$DIR/logs/debootstrap.log"; return 1; }
  rm -rf "$tree"/usr/share/{doc,man,info,locale} "$tree"/var/cache/apt/* "$tree"/var/lib/apt/lists/*
  tar --numeric-owner -C "$tree" -cf "$ROOTFS_TAR.tmp" .
  mv "$ROOTFS_TAR.tmp" "$ROOTFS_TAR"
  rm -rf "$tree"
}

start_engine() {
  mkdir -p "$DIR/run" "$DIR/data" "$DIR/logs" "$DIR/pids" "$EXEC_ROOT"
  echo '{}' > "$DIR/daemon.json"  # not the system's /etc/docker/daemon.json
  setsid dockerd --config-file "$DIR/daemon.json" -H "unix://$SOCKET" --data-root "$DIR/data" \
    --exec-root "$EXEC_ROOT" \
    --pidfile "$DIR/pids/dockerd.pid" --storage-driver vfs --iptables=false --ip-forward=false \
    --ip-masq=false --bridge=none --userland-proxy=false --log-level warn \
    < /dev/null > "$DIR/logs/dockerd.log" 2>&1 &  # it writes its own pid file
  wait_until 60 "dockerd ($DIR/logs/dockerd.log)" curl -sf --unix-socket "$SOCKET" http://docker/_ping
}

# Whether GET /v2/ on 127.0.0.1:$1 answers HTTP status $2.
registry_answers() {
  [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$1/v2/" || true)" = "$2" ]
}

# start_registry NAME PORT [htpasswd file]: fails unless this registry answers there (200 open,
# 401 with auth), so that a port taken meanwhile is not mistaken for it.
start_registry() {
  local name="$1" port="$2" htpasswd="${3:-}" config="$DIR/registry/$1.yml"
  mkdir -p "$DIR/registry/$name"
  {
    echo "version: 0.1"
    echo "log: {level: warn}"
    echo "storage:"
    echo "  filesystem: {rootdirectory: $DIR/registry/$name}"
    echo "  delete: {enabled: true}"
    echo "http: {addr: 127.0.0.1:$port, secret: $(random_text)}"
    [ -z "$htpasswd" ] || printf 'auth:\n  htpasswd: {realm: det-test-registry, path: %s}\n' "$htpasswd"
  } > "$config"
  setsid docker-registry serve "$config" < /dev/null > "$DIR/logs/$name.log" 2>&1 &
  echo $! > "$DIR/pids/$name.pid"
  local expected=200
  [ -z "$htpasswd" ] || expected=401
  wait_until 30 "registry $name ($DIR/logs/$name.log)" \
    registry_answers "$port" "$expected"
  alive "$(pid_of "$name")" || { log "registry $name exited: $DIR/logs/$name.log"; return 1; }
}

# push_only IMAGE REMOTE: pushes IMAGE as REMOTE and leaves only IMAGE in the engine.
push_only() {
  docker_cli tag "$1" "$2"
  docker_cli push "$2" > "$DIR/logs/push.log" 2>&1 || { log "pushing $2 failed"; cat "$DIR/logs/push.log"; return 1; }
  docker_cli rmi "$2" > /dev/null
}

start() {
  [ "$(id -u)" -eq 0 ] || { log "needs root (dockerd)"; return 1; }
  for tool in dockerd docker docker-registry debootstrap htpasswd; do
    command -v "$tool" > /dev/null || { log "$tool is missing: run scripts/install-deps.sh"; return 1; }
  done
  stop_all
  mkdir -p "$DIR/logs" "$DIR/pids"
  make_rootfs
  start_engine
  if ! docker_cli image inspect "$IMAGE" > /dev/null 2>&1; then
    docker_cli import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
      --change 'ENV LANG=C.UTF-8' "$ROOTFS_TAR" "$IMAGE" > /dev/null
  fi
  local open_port private_port password
  open_port="$(free_port)"
  private_port="$(free_port)"
  while [ "$private_port" = "$open_port" ]; do private_port="$(free_port)"; done
  password="$(random_text)"
  mkdir -p "$DIR/registry"
  htpasswd -Bbn det-user "$password" > "$DIR/registry/htpasswd" 2>/dev/null
  start_registry registry-open "$open_port"
  start_registry registry-private "$private_port" "$DIR/registry/htpasswd"
  push_only "$IMAGE" "127.0.0.1:$open_port/det-test/pullable:1"
  echo "$password" | docker_cli login "127.0.0.1:$private_port" -u det-user --password-stdin > /dev/null 2>&1
  push_only "$IMAGE" "127.0.0.1:$private_port/det-test/private:1"
  docker_cli logout "127.0.0.1:$private_port" > /dev/null
  docker_cli run --rm --network none "$IMAGE" python3 -c 'print("ok")' > /dev/null
  cat > "$DIR/engine.env" <<EOF
DET_TEST_DOCKER_SOCKET=$SOCKET
DET_TEST_DOCKER_IMAGE=$IMAGE
DET_TEST_DOCKER_PULLABLE=127.0.0.1:$open_port/det-test/pullable:1
DET_TEST_DOCKER_PRIVATE=127.0.0.1:$private_port/det-test/private:1
DET_TEST_DOCKER_REGISTRY=127.0.0.1:$private_port
DET_TEST_DOCKER_REGISTRY_USER=det-user
DET_TEST_DOCKER_REGISTRY_PASSWORD=$password
EOF
  log "engine on $SOCKET ($(docker_cli version --format '{{.Server.Version}}')), registries on" \
    "127.0.0.1:$open_port (open) and 127.0.0.1:$private_port (basic auth): $DIR/engine.env"
}

# `start` runs under errexit (not in a `||` list, which would switch it off): the first failing
# step ends the script, and the trap stops what was started.
case "$ACTION" in
  start)
    trap 'rc=$?; [ "$rc" -eq 0 ] || { log "start failed; stopping what it started"; stop_all; }' EXIT
    start
    ;;
  stop) stop_all ;;
  *) echo "usage: $0 start|stop DIR" >&2; exit 2 ;;
esac

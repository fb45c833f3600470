#!/usr/bin/env bash
# Makes sure a Docker engine answers on the default socket, for the kind
# suite (`make e2e-kind`). On a machine without one it installs Debian's
# docker.io (with containerd, runc and the tools a node needs) and starts
# dockerd in the background, its log in $DOCKER_LOG.
#
# Two facts of these VMs (docs/kind.md):
# - CAP_SYS_RESOURCE is missing from the capability bounding set, and
#   `docker run --privileged` (which kind's nodes are) asks for it, so runc
#   fails with "unable to apply caps: operation not permitted". When, and only
#   when, the capability is missing, dockerd's default runtime is a wrapper
#   (hack/runc-nosysresource.sh) that drops it before calling runc.
# - The cluster's addresses come from 198.19.0.0/16 (the tests' network
#   namespaces take 198.18.0.0/16): the docker bridge is 198.19.0.1/24 and the
#   networks docker makes (kind's) are /24s from 198.19.16.0/20.
set -euo pipefail
cd "$(dirname "$0")/.."
DOCKER_LOG="${DOCKER_LOG:-/tmp/ingress-xds-dockerd.log}"

if docker info >/dev/null 2>&1; then
  # A dockerd started from another checkout (a git worktree since
  # removed) runs containers through a wrapper that is gone, and every
  # docker run then fails with "unable to retrieve OCI runtime error".
  runtime="$(docker info --format '{{range $name, $r := .Runtimes}}{{if eq $name "nosysresource"}}{{$r.Path}}{{end}}{{end}}' 2>/dev/null || true)"
  if [[ -n "$runtime" && ! -x "$runtime" ]]; then
    echo "dockerd runs containers through $runtime, which no longer exists: stop that dockerd (it was started from another checkout) and run this again" >&2
    exit 1
  fi
  exit 0
fi

if ! command -v dockerd >/dev/null; then
  echo "installing Debian's docker.io, containerd, runc and node tools ..." >&2
  export DEBIAN_FRONTEND=noninteractive
  pkgs=(docker.io containerd runc containernetworking-plugins iptables conntrack debootstrap jq)
  apt-get install -y -q "${pkgs[@]}" >&2 || { apt-get update -q >&2 && apt-get install -y -q "${pkgs[@]}" >&2; }
fi

args=(--bip 198.19.0.1/24 --default-address-pool base=198.19.16.0/20,size=24
  --storage-driver overlay2 --iptables=true)
# Bit 24 of CapBnd is CAP_SYS_RESOURCE.
capbnd="$(awk '/^CapBnd:/ {print $2}' /proc/self/status)"
if (( (16#$capbnd >> 24 & 1) == 0 )); then
  wrapper="$PWD/hack/runc-nosysresource.sh"
  args+=(--add-runtime "nosysresource=$wrapper" --default-runtime nosysresource)
  echo "CAP_SYS_RESOURCE is not in the bounding set: dockerd runs containers through $wrapper" >&2
fi

echo "starting dockerd (log $DOCKER_LOG) ..." >&2
# setsid: dockerd outlives this script and the make that ran it. It gets
# none of this shell's other open files: one of them may be a lock the
# caller holds (`flock LOCK make test`), which dockerd and containerd
# would otherwise hold for as long as they run.
(
  for fd in /proc/self/fd/*; do
    fd="${fd##*/}"
    if [[ "$fd" -gt 2 ]]; then eval "exec $fd>&-" 2>/dev/null || true; fi
  done
  exec setsid dockerd "${args[@]}" >"$DOCKER_LOG" 2>&1 < /dev/null
) &
for _ in $(seq 1 60); do
  if docker info >/dev/null 2>&1; then
    echo "dockerd is up" >&2
    exit 0
  fi
  sleep 0.5
done
echo "dockerd did not answer within 30 s; its log:" >&2
tail -30 "$DOCKER_LOG" >&2
exit 1

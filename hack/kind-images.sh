#!/usr/bin/env bash
# Builds everything a kind cluster needs on a machine with no image registry
# (docs/kind.md), from Debian's packages, the Go module proxy and the
# Kubernetes binaries of hack/install-kube*.sh, and caches it under
# ~/.cache/ingress-xds keyed by version (a second run is a no-op):
#   - kind itself (.tools/bin/kind, as e2e/kind/run.sh installs it);
#   - two Debian rootfs tarballs from debootstrap: the "runtime" (minbase with
#     iptables, nftables, conntrack, iproute2) that the component images run
#     on, and the kind base image's (kind's packages, Debian's containerd, runc
#     and CNI plugins), with kind's images/base files, copied at build time
#     from kind's module source, and its Dockerfile's steps replayed;
#   - the images kubeadm and kind's node image ask for, tagged as they ask:
#     kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy,
#     etcd, pause, CoreDNS, kindnetd (a stand-in: hack/kind/kindnetd) and
#     local-path-provisioner with its helper;
#   - the node image, with `kind build node-image --type file` from a
#     Kubernetes server tarball assembled from those.
# Prints what it built and how long each step took; the last line is the node
# image's name.
#
# Environment (all optional):
#   INGRESS_XDS_CACHE  cache root (~/.cache/ingress-xds)
#   DEBIAN_MIRROR      Debian mirror for debootstrap (the one apt uses here)
#   KIND_REBUILD=1     rebuild the docker images even when their recipe matches
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"

KIND_VERSION="${KIND_VERSION:-v0.33.0}"
KUBE_VERSION="${KUBE_VERSION:-1.37.2}"
ETCD_VERSION="${ETCD_VERSION:-3.7.3}" # the project's etcd (hack/install-kube.sh)
DEBIAN_SUITE=bookworm
# The newest the Go module proxy serves (kind v0.33.0 packages v0.0.34).
LOCAL_PATH_VERSION=v0.0.30
CACHE_ROOT="${INGRESS_XDS_CACHE:-$HOME/.cache/ingress-xds}"
OUT="$CACHE_ROOT/kind-$KIND_VERSION-kube-$KUBE_VERSION"
NODE_IMAGE="ingress-xds-kind/node:v$KUBE_VERSION"
BASE_IMAGE="ingress-xds-kind/base:$DEBIAN_SUITE"
RUNTIME_IMAGE="ingress-xds-kind/runtime:$DEBIAN_SUITE"
TOOLS="$ROOT/.tools"
KIND="$TOOLS/bin/kind"
export GOTOOLCHAIN=local GOFLAGS="-mod=mod -buildvcs=false" DOCKER_BUILDKIT=0

# kind's base image packages (images/base/Dockerfile), less the storage
# tests' (nfs-common, open-iscsi), plus Debian's containerd, runc and CNI
# plugins where kind builds its own.
BASE_PACKAGES=(systemd conntrack iptables nftables iproute2 ethtool util-linux mount kmod
  libseccomp2 pigz fuse-overlayfs e2fsprogs bash ca-certificates curl jq procps
  containerd runc containernetworking-plugins)
RUNTIME_PACKAGES=(ca-certificates iptables nftables conntrack iproute2)

mkdir -p "$OUT" "$TOOLS/bin"
report=()
step() { # step NAME COMMAND...: runs and times a step
  local name=$1 t0=$SECONDS
  shift
  printf '\n=== %s\n' "$name" >&2
  "$@"
  report+=("$(printf '%-34s %5d s' "$name" $((SECONDS - t0)))")
}

# The recipe of every docker image: this script and hack/kind/. An image
# whose label differs is rebuilt; one that matches is kept.
recipe="$(find "$0" hack/kind -type f | sort | xargs cat | sha256sum | cut -c1-16)"
have_image() {
  [[ "${KIND_REBUILD:-}" != 1 ]] &&
    [[ "$(docker image inspect -f '{{index .Config.Labels "ingress-xds.recipe"}}' "$1" 2>/dev/null)" == "$recipe" ]]
}

# dbuild ARGS...: docker build, quiet unless it fails (the classic builder
# warns of its deprecation on every run).
dbuild() {
  local out
  out="$(docker build -q "$@" 2>&1)" || { echo "$out" >&2; return 1; }
}

debian_mirror() {
  if [[ -n "${DEBIAN_MIRROR:-}" ]]; then echo "$DEBIAN_MIRROR"; return; fi
  local m
  m="$(grep -hsE '^(URIs:|deb )' /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list /etc/apt/sources.list |
    grep -oE 'https?://[^ ]*/debian/?$|https?://[^ ]*/debian ' | head -1 | tr -d ' ')"
  echo "${m:-http://deb.debian.org/debian}"
}

install_kind() {
  if [[ -x "$KIND" ]] && [[ "$("$KIND" version 2>/dev/null | awk '{print $2}')" == "$KIND_VERSION" ]]; then
    return
  fi
  GOBIN="$TOOLS/bin" go install "sigs.k8s.io/kind@$KIND_VERSION"
}

kube_binaries() {
  bash hack/install-kube.sh >/dev/null # kube-apiserver, etcd
  bash hack/install-kube-node.sh >/dev/null
}
KUBE_BIN="$CACHE_ROOT/kube-node-$KUBE_VERSION"
APISERVER_BIN="$CACHE_ROOT/kube-$KUBE_VERSION-etcd-$ETCD_VERSION"

# rootfs NAME PACKAGES...: a debootstrap minbase tarball, cached by name.
rootfs() {
  local name=$1 tarball="$OUT/rootfs-$1.tar"
  shift
  [[ -s "$tarball" ]] && return
  local dir="$OUT/rootfs-$name.tmp"
  rm -rf "$dir"
  mkdir -p "$OUT/debs"
  local include
  include="$(IFS=,; echo "$*")"
  debootstrap --variant=minbase --cache-dir="$OUT/debs" --include="$include" \
    "$DEBIAN_SUITE" "$dir" "$(debian_mirror)" >"$OUT/debootstrap-$name.log" 2>&1 ||
    { tail -20 "$OUT/debootstrap-$name.log" >&2; return 1; }
  # What kind's clean-install removes after installing.
  chroot "$dir" apt-get clean
  rm -rf "$dir"/var/lib/apt/lists/* "$dir"/var/log/* "$dir"/tmp/* "$dir"/var/tmp/* \
    "$dir"/usr/share/doc/* "$dir"/usr/share/man/* "$dir"/var/cache/debconf/*-old
  tar -C "$dir" --numeric-owner -cf "$tarball.tmp" .
  mv "$tarball.tmp" "$tarball"
  rm -rf "$dir"
}

# import_rootfs NAME IMAGE: the tarball as an image.
import_rootfs() {
  docker import --change "LABEL ingress-xds.recipe=$recipe" "$OUT/rootfs-$1.tar" "$2" >/dev/null
}

runtime_image() {
  have_image "$RUNTIME_IMAGE" && return
  import_rootfs runtime "$RUNTIME_IMAGE"
}

# The kind base image: kind's images/base/Dockerfile replayed on the Debian
# rootfs, with Debian's containerd, runc and CNI plugins where kind builds
# its own (in the paths kind's files expect).
base_image() {
  have_image "$BASE_IMAGE" && return
  local kinddir ctx
  kinddir="$(cd "$TOOLS" && go mod download -json "sigs.k8s.io/kind@$KIND_VERSION" | sed -n 's/.*"Dir": "\(.*\)",/\1/p')"
  [[ -d "$kinddir/images/base/files" ]] || { echo "kind's images/base/files not in $kinddir" >&2; return 1; }
  import_rootfs base "$BASE_IMAGE-rootfs"
  ctx="$(mktemp -d)"
  cp -r "$kinddir/images/base/files" "$ctx/files"
  cp hack/kind/ctr-compat.sh "$ctx/"
  chmod -R u+w "$ctx"
  cat >"$ctx/Dockerfile" <<EOF
FROM $BASE_IMAGE-rootfs
COPY files/usr/local/bin/ /usr/local/bin/
COPY files/kind/ /kind/
COPY files/LICENSES/ /LICENSES/
COPY files/etc/ /etc/
RUN chmod 0755 /usr/local/bin/* /kind /kind/bin /kind/bin/* \\
    && find /etc/containerd /etc/default /etc/sysctl.d /etc/systemd/system /etc/crictl.yaml /kind/README.txt -type f -exec chmod 0644 {} + \\
    && find /lib/systemd/system/sysinit.target.wants/ -name "systemd-tmpfiles-setup.service" -delete \\
    && rm -f /lib/systemd/system/multi-user.target.wants/* \\
    && rm -f /etc/systemd/system/*.wants/* \\
    && rm -f /lib/systemd/system/local-fs.target.wants/* \\
    && rm -f /lib/systemd/system/sockets.target.wants/*udev* \\
    && rm -f /lib/systemd/system/sockets.target.wants/*initctl* \\
    && rm -f /lib/systemd/system/basic.target.wants/* \\
    && echo "ReadKMsg=no" >> /etc/systemd/journald.conf \\
    && ln -sf /usr/lib/systemd/systemd /sbin/init
RUN systemctl enable kubelet.service \\
    && systemctl enable containerd.service \\
    && systemctl enable undo-mount-hacks.service \\
    && systemctl mask systemd-binfmt.service \\
    && mkdir -p /etc/kubernetes/manifests
# Debian's containerd and runc where kind's units and scripts look for its
# own builds; Debian's CNI plugins in /opt/cni/bin; ctr 1.6 made to answer
# the two commands of containerd 2's ctr that kind runs (hack/kind/ctr-compat.sh).
COPY ctr-compat.sh /usr/local/bin/ctr
RUN ln -s /usr/bin/containerd /usr/bin/containerd-shim-runc-v2 /usr/local/bin/ \\
    && ln -s /usr/sbin/runc /usr/local/sbin/runc \\
    && mkdir -p /opt/cni/bin \\
    && cp /usr/lib/cni/host-local /usr/lib/cni/loopback /usr/lib/cni/ptp /usr/lib/cni/portmap /usr/lib/cni/bridge /opt/cni/bin/ \\
    && ctr oci spec \\
       | jq '.hooks.createContainer[.hooks.createContainer| length] |= . + {"path": "/kind/bin/mount-product-files.sh"}' \\
       | jq 'del(.process.rlimits)' > /etc/containerd/cri-base.json \\
    && containerd --version && runc --version
ENV container=docker
STOPSIGNAL SIGRTMIN+3
LABEL ingress-xds.recipe=$recipe
ENTRYPOINT [ "/usr/local/bin/entrypoint", "/sbin/init" ]
EOF
  dbuild -t "$BASE_IMAGE" "$ctx"
  docker rmi "$BASE_IMAGE-rootfs" >/dev/null
  rm -rf "$ctx"
}

# Static Go binaries for the images: CoreDNS and local-path-provisioner from
# the Go module proxy, pause and the kindnetd stand-in from hack/kind.
go_binaries() {
  local dest="$OUT/bin"
  mkdir -p "$dest"
  export CGO_ENABLED=0
  [[ -x "$dest/coredns-$COREDNS_VERSION" ]] || {
    GOBIN="$dest/tmp" go install -trimpath -ldflags "-s -w" "github.com/coredns/coredns@$COREDNS_VERSION"
    mv "$dest/tmp/coredns" "$dest/coredns-$COREDNS_VERSION"
  }
  [[ -x "$dest/local-path-provisioner-$LOCAL_PATH_VERSION" ]] || {
    GOBIN="$dest/tmp" go install -trimpath -ldflags "-s -w" "github.com/rancher/local-path-provisioner@$LOCAL_PATH_VERSION"
    mv "$dest/tmp/local-path-provisioner" "$dest/local-path-provisioner-$LOCAL_PATH_VERSION"
  }
  # Ours: rebuilt every time (seconds, from the build cache).
  go build -trimpath -ldflags "-s -w" -o "$dest/" ./hack/kind/pause ./hack/kind/kindnetd
  rm -rf "$dest/tmp"
  unset CGO_ENABLED
}

# image "FILE..." TAG... <<DOCKERFILE: builds one image from a Dockerfile on
# stdin, with the named files of $BINS as its context, under every TAG.
image() {
  local files=$1 first=$2 t f ctx
  have_image "$first" && return
  ctx="$(mktemp -d)"
  for f in $files; do ln "$BINS/$f" "$ctx/$f" 2>/dev/null || cp "$BINS/$f" "$ctx/$f"; done
  dbuild -t "$first" -f - "$ctx"
  rm -rf "$ctx"
  for t in "${@:3}"; do docker tag "$first" "$t"; done
}

# The images kubeadm asks for (`kubeadm config images list`), the sandbox
# image of kind's containerd configuration and kind's CNI and storage
# images, each under the exact name kind and kubeadm look for.
component_images() {
  local kinddir
  kinddir="$(cd "$TOOLS" && go mod download -json "sigs.k8s.io/kind@$KIND_VERSION" | sed -n 's/.*"Dir": "\(.*\)",/\1/p')"
  mapfile -t kubeadm_images < <("$KUBE_BIN/kubeadm" config images list --kubernetes-version "v$KUBE_VERSION" 2>/dev/null)
  want() { printf '%s\n' "${kubeadm_images[@]}" | grep "/$1:"; }
  sandbox="$(sed -n 's/^ *sandbox_image = "\(.*\)"/\1/p' "$kinddir/images/base/files/etc/containerd/config.toml")"
  kindnetd="$(sed -n 's/^const kindnetdImage = "\(.*\)"/\1/p' "$kinddir/pkg/build/nodeimage/const_cni.go")"
  provisioner="$(sed -n 's/^const storageProvisionerImage = "\(.*\)"/\1/p' "$kinddir/pkg/build/nodeimage/const_storage.go")"
  helper="$(sed -n 's/^const storageHelperImage = "\(.*\)"/\1/p' "$kinddir/pkg/build/nodeimage/const_storage.go")"
  for v in sandbox kindnetd provisioner helper; do
    [[ -n "${!v}" ]] || { echo "could not read kind's $v image from $kinddir" >&2; return 1; }
  done

  # One directory of every binary the images copy.
  BINS="$OUT/bin"
  for b in "$KUBE_BIN"/kube-{controller-manager,scheduler,proxy} "$APISERVER_BIN"/{kube-apiserver,etcd}; do
    cmp -s "$b" "$BINS/${b##*/}" || cp "$b" "$BINS/"
  done
  # kube-apiserver and etcd are linked with libc (hack/install-kube.sh), so
  # every component runs on the runtime image; its layer is stored once.
  for c in kube-apiserver kube-controller-manager kube-scheduler kube-proxy; do
    image "$c" "$(want "$c")" <<EOF
FROM $RUNTIME_IMAGE
COPY $c /usr/local/bin/$c
LABEL ingress-xds.recipe=$recipe
EOF
  done
  # kubeadm asks for etcd 3.7.0-0; this is the project's etcd (3.7.3).
  image etcd "$(want etcd)" <<EOF
FROM $RUNTIME_IMAGE
COPY etcd /usr/local/bin/etcd
LABEL ingress-xds.recipe=$recipe
EOF
  image pause "$sandbox" "$(want pause)" <<EOF
FROM scratch
COPY pause /pause
LABEL ingress-xds.recipe=$recipe
USER 65535:65535
ENTRYPOINT ["/pause"]
EOF
  # As root: upstream's runs as 65532 with CAP_NET_BIND_SERVICE as a file
  # capability on the binary, which the classic builder's COPY drops, and
  # kubeadm's Deployment drops every other capability anyway.
  image "coredns-$COREDNS_VERSION" "$(want coredns)" <<EOF
FROM scratch
COPY coredns-$COREDNS_VERSION /coredns
LABEL ingress-xds.recipe=$recipe
EXPOSE 53 53/udp
ENTRYPOINT ["/coredns"]
EOF
  image kindnetd "$kindnetd" <<EOF
FROM $RUNTIME_IMAGE
COPY kindnetd /bin/kindnetd
LABEL ingress-xds.recipe=$recipe
ENTRYPOINT ["/bin/kindnetd"]
EOF
  image "local-path-provisioner-$LOCAL_PATH_VERSION" "$provisioner" <<EOF
FROM $RUNTIME_IMAGE
COPY local-path-provisioner-$LOCAL_PATH_VERSION /usr/local/bin/local-path-provisioner
LABEL ingress-xds.recipe=$recipe
ENTRYPOINT ["/usr/local/bin/local-path-provisioner"]
EOF
  # The helper only needs sh, mkdir and rm: the runtime image has them.
  have_image "$helper" || docker tag "$RUNTIME_IMAGE" "$helper"
  EXTRA_IMAGES=("$(want etcd)" "$sandbox" "$(want pause)" "$(want coredns)" "$kindnetd" "$provisioner" "$helper")
  KUBE_IMAGES=()
  for c in kube-apiserver kube-controller-manager kube-scheduler kube-proxy; do KUBE_IMAGES+=("$(want "$c")"); done
}

# save_archive TAR IMAGE...: `docker save` of the images, with the legacy
# "repositories" index first. kind v0.33.0 takes the images a tarball holds
# from its first index entry (manifest.json lists one image's tags first;
# "repositories" lists all), and pulls every image it needs that no tarball
# holds, which cannot work here: so the first tarball carries the images it
# would pull too.
save_archive() {
  local tarball=$1 dir
  shift
  dir="$(mktemp -d)"
  docker save "$@" | tar -C "$dir" -xf -
  # docker names docker.io's images without their registry; kind compares
  # the full names (docker.io/kindest/kindnetd:...).
  jq -c 'with_entries(.key |= (if (split("/") | length > 1 and (.[0] | test("[.:]") or . == "localhost")) then . elif (split("/") | length) == 1 then "docker.io/library/" + . else "docker.io/" + . end))' \
    "$dir/repositories" >"$dir/repositories.new"
  mv "$dir/repositories.new" "$dir/repositories"
  (cd "$dir" && tar -cf "$tarball" repositories manifest.json $(ls | grep -vxE 'repositories|manifest.json'))
  rm -rf "$dir"
}

node_image() {
  have_image "$NODE_IMAGE" && return
  local work
  work="$(mktemp -d)"
  local bin="$work/kubernetes/server/bin"
  mkdir -p "$bin"
  echo "v$KUBE_VERSION" >"$work/kubernetes/version"
  cp "$KUBE_BIN"/{kubeadm,kubelet,kubectl} "$bin/"
  save_archive "$bin/kube-apiserver.tar" "${KUBE_IMAGES[0]}" "${EXTRA_IMAGES[@]}"
  save_archive "$bin/kube-controller-manager.tar" "${KUBE_IMAGES[1]}"
  save_archive "$bin/kube-scheduler.tar" "${KUBE_IMAGES[2]}"
  save_archive "$bin/kube-proxy.tar" "${KUBE_IMAGES[3]}"
  # kind reads it through gzip; the images inside are what takes room, and
  # compressing 1.3 GB took gzip over ten minutes on a busy machine: stored
  # blocks (level 0) instead.
  tar -C "$work" -cf - kubernetes | python3 -c 'import gzip, shutil, sys
with gzip.GzipFile(fileobj=sys.stdout.buffer, mode="wb", compresslevel=0) as z:
    shutil.copyfileobj(sys.stdin.buffer, z, 1 << 20)' >"$work/kubernetes-server-linux-amd64.tar.gz"
  "$KIND" build node-image --type file --base-image "$BASE_IMAGE" --image "$NODE_IMAGE-kind" \
    "$work/kubernetes-server-linux-amd64.tar.gz" >&2
  # The recipe label, so that a second run knows the image.
  printf 'FROM %s\nLABEL ingress-xds.recipe=%s\n' "$NODE_IMAGE-kind" "$recipe" | dbuild -t "$NODE_IMAGE" -
  docker rmi "$NODE_IMAGE-kind" >/dev/null
  rm -rf "$work"
}

# hack/kind-images.sh FUNCTION ARGS...: one step alone, for debugging.
if [[ $# -gt 0 ]]; then
  "$@"
  exit
fi

t_all=$SECONDS
step "kind $KIND_VERSION" install_kind
step "kubernetes binaries v$KUBE_VERSION" kube_binaries
step "rootfs runtime (debootstrap)" rootfs runtime "${RUNTIME_PACKAGES[@]}"
step "rootfs base (debootstrap)" rootfs base "${BASE_PACKAGES[@]}"
step "image $RUNTIME_IMAGE" runtime_image
step "image $BASE_IMAGE" base_image
COREDNS_VERSION="$("$KUBE_BIN/kubeadm" config images list --kubernetes-version "v$KUBE_VERSION" 2>/dev/null | sed -n 's|.*/coredns:||p')"
step "go binaries (coredns $COREDNS_VERSION, ...)" go_binaries
step "component images" component_images
step "image $NODE_IMAGE" node_image
{
  echo
  echo "built (cache $OUT):"
  printf '  %s\n' "${report[@]}"
  printf '  %-34s %5d s\n' total $((SECONDS - t_all))
  echo "images: $BASE_IMAGE $RUNTIME_IMAGE ${KUBE_IMAGES[*]} ${EXTRA_IMAGES[*]}"
} >&2
echo "$NODE_IMAGE"

#!/bin/bash
# ctr for the locally built kind base image (hack/kind-images.sh): kind
# v0.33.0 drives containerd 2's ctr, the image has Debian's containerd 1.6
# (nothing newer is packaged for bookworm). Two of the commands kind runs
# while building the node image are missing from ctr 1.6:
#   - `ctr info`, its readiness check: `ctr version` asks the daemon too;
#   - `ctr images import --label=K=V ...`, which pins the preloaded images:
#     the import without the flag, then the label set on every image of the
#     namespace (at that point only the preloaded ones exist).
# Everything else goes to Debian's ctr unchanged.
set -euo pipefail
real=/usr/bin/ctr

args=() labels=() ns=default import="" info=""
for a in "$@"; do
  case "$a" in
    --label=*) labels+=("${a#--label=}"); continue ;;
    --namespace=*) ns="${a#--namespace=}" ;;
    info) info=1 ;;
    import) import=1 ;;
  esac
  args+=("$a")
done

if [[ -n "$info" && ${#args[@]} -eq 1 ]]; then
  exec "$real" version
fi
if [[ -z "$import" || ${#labels[@]} -eq 0 ]]; then
  exec "$real" "$@"
fi
"$real" "${args[@]}"
"$real" --namespace="$ns" images list -q | while read -r image; do
  "$real" --namespace="$ns" images label "$image" "${labels[@]}" >/dev/null
done

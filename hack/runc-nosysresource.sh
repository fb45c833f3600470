#!/usr/bin/env bash
# A runc that never asks for CAP_SYS_RESOURCE, for VMs whose capability
# bounding set lacks it (hack/docker.sh registers it with dockerd only then).
# `docker run --privileged` grants every capability, and runc fails on the
# one it cannot have; this removes it from the bundle's config.json on
# create/run and from the process JSON on exec, then runs the real runc.
set -euo pipefail
RUNC="${REAL_RUNC:-/usr/sbin/runc}"
drop='walk(if type == "object" and has("bounding") then with_entries(if (.value | type) == "array" then .value |= map(select(. != "CAP_SYS_RESOURCE")) else . end) else . end)'
drop_process='if has("capabilities") and .capabilities != null then .capabilities |= with_entries(if (.value | type) == "array" then .value |= map(select(. != "CAP_SYS_RESOURCE")) else . end) else . end'

strip() { # file filter
  local tmp="$1.nosysresource"
  jq -c "$2" "$1" > "$tmp" && mv "$tmp" "$1"
}

cmd="" bundle="" process=""
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  a="${args[i]}"
  case "$a" in
    --bundle | -b) bundle="${args[i+1]:-}" ;;
    --bundle=*) bundle="${a#--bundle=}" ;;
    --process | -p) process="${args[i+1]:-}" ;;
    --process=*) process="${a#--process=}" ;;
    create | run | exec) [[ -z "$cmd" ]] && cmd="$a" ;;
  esac
done
case "$cmd" in
  create | run)
    cfg="${bundle:-.}/config.json"
    [[ -f "$cfg" ]] && grep -q CAP_SYS_RESOURCE "$cfg" && strip "$cfg" "$drop"
    ;;
  exec)
    [[ -n "$process" && -f "$process" ]] && grep -q CAP_SYS_RESOURCE "$process" && strip "$process" "$drop_process"
    ;;
esac
exec "$RUNC" "$@"

#!/usr/bin/env bash
# Checks the commit messages added since the recorded base (hack/commits-base,
# the commit before the convention was written down) against CONTRIBUTING.md:
# a subject of at most 72 characters, then a blank line, then a body saying
# why. The history before the base is left as it is. Usage: check-commits.sh
# [BASE]; exits 1 naming each commit that breaks the rule.
set -euo pipefail
cd "$(dirname "$0")/.."
base="${1:-$(tr -d '[:space:]' < hack/commits-base)}"
if ! git cat-file -e "$base^{commit}" 2>/dev/null; then
  # A shallow clone lacks the base: nothing to compare against.
  echo "check-commits: base $base not in this clone; not checked" >&2
  exit 0
fi
bad=0
count=0
while read -r commit; do
  count=$((count + 1))
  # Merge commits carry git's own subject.
  [[ $(git rev-list --parents -n 1 "$commit" | wc -w) -gt 2 ]] && continue
  subject=$(git log -1 --format=%s "$commit")
  second=$(git log -1 --format=%B "$commit" | sed -n 2p)
  body=$(git log -1 --format=%b "$commit" | grep -c . || true)
  short=$(git rev-parse --short "$commit")
  if (( ${#subject} > 72 )); then
    echo "$short: subject of ${#subject} characters (at most 72): $subject"; bad=1
  fi
  if [[ -n "$second" ]]; then
    echo "$short: no blank line after the subject"; bad=1
  fi
  if (( body == 0 )); then
    echo "$short: no body saying why: $subject"; bad=1
  fi
done < <(git rev-list "$base"..HEAD)
if (( bad )); then
  echo "check-commits: see CONTRIBUTING.md" >&2
  exit 1
fi
echo "check-commits: $count commits since $base follow CONTRIBUTING.md"

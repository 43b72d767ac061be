#!/usr/bin/env bash
# Builds the checkouts folder `npm run bench:accuracy -- <folder>` reads: one git checkout per
# repository named in bench/accuracy/*/expected.json, as <folder>/<owner>__<repo>/, at the
# pinned `commit`. Usage: bench/corpus-checkouts.sh [folder (default /tmp/corpus)]
# Clones from a local mirror when MIRRORS holds <owner>+<repo>/repo (a bare git directory),
# else from https://github.com/<owner>/<repo>. An existing checkout is only moved to the pin.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-/tmp/corpus}"
mirrors="${MIRRORS:-/work/.mirror}"
mkdir -p "$out"
for f in "$here"/accuracy/*/expected.json; do
  repo="$(jq -r '.repository // empty' "$f")"
  commit="$(jq -r '.commit // empty' "$f")"
  [ -n "$repo" ] || continue
  dir="$out/${repo/\//__}"
  if [ ! -d "$dir/.git" ]; then
    src="$mirrors/${repo/\//+}/repo"
    [ -d "$src" ] || src="https://github.com/$repo"
    git clone --quiet --no-checkout "$src" "$dir"
  fi
  if [ -n "$commit" ] && ! git -C "$dir" cat-file -e "$commit^{commit}" 2>/dev/null; then
    echo "$repo: pinned commit $commit not in the clone; left at $(git -C "$dir" rev-parse HEAD)" >&2
  elif [ -n "$commit" ]; then
    # A blob missing from a mirror fails the checkout of that one file; the rest is checked out.
    # A checkout that fails outright may leave the index empty; the bench lists files with
    # `git ls-files`, so the index is then read from the commit's tree (no blob needed).
    if ! git -C "$dir" -c advice.detachedHead=false checkout --quiet --force "$commit"; then
      echo "$repo: checked out $commit with the errors above" >&2
      [ -n "$(git -C "$dir" ls-files | head -1)" ] || git -C "$dir" read-tree "$commit"
    fi
  fi
done

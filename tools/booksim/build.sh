#!/usr/bin/env bash
# Build BookSim 2 (github.com/booksim/booksim2) at a pinned commit, as the
# reference simulator for `podsim noc --router booksim` (issue 18, item 1).
#
# Usage:
#   tools/booksim/build.sh [MIRROR]
#
# Source of the BookSim code, in this order:
#   1. tools/booksim/build/booksim2 already holds the pinned commit: reused.
#   2. MIRROR (first argument) or $BOOKSIM_MIRROR: a local git repository or
#      bare git directory holding the commit, e.g. a mirror
#      /work/.mirror/booksim+booksim2/repo. The tree is exported with
#      `git --git-dir=MIRROR archive COMMIT | tar -x`.
#   3. Otherwise, with network access:
#      `git clone https://github.com/booksim/booksim2` + `git checkout COMMIT`.
#
# Pinned commit: BOOKSIM_COMMIT below (booksim2 master, 2017-06-27,
# "do not allow zero rates in hot spot traffic pattern"). Override with
# $BOOKSIM_COMMIT at your own risk: the committed curves were made with it.
#
# Needs: git, g++, make, flex, bison (Debian: apt-get install g++ make flex bison).
# Output: tools/booksim/build/booksim2/src/booksim (the binary), and
# tools/booksim/build/COMMIT (the commit built). Everything under
# tools/booksim/build/ is ignored by git (see build/.gitignore).
set -euo pipefail

BOOKSIM_COMMIT="${BOOKSIM_COMMIT:-28f43299f1706a3160ffac721ca461d74eb6e618}"
HERE="$(cd "$(dirname "$0")" && pwd)"
BUILD="$HERE/build"
SRC="$BUILD/booksim2"
MIRROR="${1:-${BOOKSIM_MIRROR:-}}"

mkdir -p "$BUILD"

for tool in git g++ make flex bison; do
  command -v "$tool" >/dev/null || { echo "build.sh: missing $tool (apt-get install g++ make flex bison git)" >&2; exit 1; }
done

if [ -f "$BUILD/COMMIT" ] && [ "$(cat "$BUILD/COMMIT")" = "$BOOKSIM_COMMIT" ] && [ -d "$SRC/src" ]; then
  echo "build.sh: reusing $SRC at $BOOKSIM_COMMIT"
else
  rm -rf "$SRC" "$BUILD/COMMIT"
  if [ -n "$MIRROR" ]; then
    echo "build.sh: exporting $BOOKSIM_COMMIT from local mirror $MIRROR"
    mkdir -p "$SRC"
    if [ -d "$MIRROR/.git" ]; then GD="$MIRROR/.git"; else GD="$MIRROR"; fi
    git --git-dir="$GD" archive "$BOOKSIM_COMMIT" | tar -x -C "$SRC"
  else
    echo "build.sh: cloning https://github.com/booksim/booksim2"
    git clone https://github.com/booksim/booksim2 "$SRC"
    git -C "$SRC" checkout --detach "$BOOKSIM_COMMIT"
  fi
  echo "$BOOKSIM_COMMIT" > "$BUILD/COMMIT"
fi

# BookSim's own Makefile: -O3 -g, flex + bison for the config parser.
# One job only by default (the machine is shared); override with MAKEFLAGS.
make -C "$SRC/src" booksim
ls -l "$SRC/src/booksim"
echo "build.sh: built BookSim $BOOKSIM_COMMIT -> $SRC/src/booksim"

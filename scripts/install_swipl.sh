#!/usr/bin/env bash
# Print the bin/ folder of an SWI-Prolog >= 9.1.12 (janus-swi's minimum), building one
# into a cache folder when the system has none. Debian bookworm ships 9.0.4 and its
# trixie binary package drags a libc upgrade, so we build trixie's *source* package:
# the core system only (no packages, docs or tests), about 100 s on 2 cores, once.
set -euo pipefail

MIN="90112"  # 9.1.12 as SWI's PLVERSION integer
VERSION="9.2.9"
CACHE="${EXPLAIN_EVAL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/explain-eval}"
PREFIX="$CACHE/swipl-$VERSION"

plversion() {  # integer version of the swipl on PATH at $1, or 0
  "$1" --dump-runtime-variables 2>/dev/null | sed -n 's/^PLVERSION="\([0-9]*\)";/\1/p' || echo 0
}

if [ -x "$PREFIX/bin/swipl" ]; then echo "$PREFIX/bin"; exit 0; fi
if command -v swipl >/dev/null 2>&1; then
  v=$(plversion "$(command -v swipl)")
  if [ "${v:-0}" -ge "$MIN" ]; then dirname "$(command -v swipl)"; exit 0; fi
fi

echo "building SWI-Prolog $VERSION into $PREFIX (system has none >= 9.1.12)" >&2
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
SRC_LIST=/etc/apt/sources.list.d/explain-eval-trixie-src.sources
if [ ! -f "$SRC_LIST" ]; then
  printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: trixie\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    | $SUDO tee "$SRC_LIST" >/dev/null
fi
$SUDO apt-get update -qq >&2
$SUDO apt-get install -y -qq --no-install-recommends cmake gcc g++ make libgmp-dev zlib1g-dev libncurses-dev dpkg-dev >&2

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
chmod 777 "$WORK"  # apt drops to user _apt for the download
apt-get source --download-only --tar-only swi-prolog >&2
$SUDO rm -f "$SRC_LIST"  # only needed for this download: leave the system's apt sources as they were
tar xzf swi-prolog_*.orig.tar.gz
cd swi-prolog_*/
mkdir build && cd build
cmake -DSWIPL_PACKAGES=OFF -DINSTALL_DOCUMENTATION=OFF -DBUILD_TESTING=OFF \
  -DUSE_TCMALLOC=OFF -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$PREFIX" .. >&2
make -j"$(nproc)" >&2
make install >&2
echo "$PREFIX/bin"

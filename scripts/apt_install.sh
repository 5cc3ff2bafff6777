#!/usr/bin/env bash
# apt_install.sh PURPOSE PACKAGE...: install Debian packages for a test that needs a real
# component, when that can be done without a password (root, or passwordless sudo). Without
# apt-get or such rights it says why it did nothing and exits 0: the test then skips naming
# the reason, and a machine that provides the component its own way is left alone. An
# apt-get failure exits 1; the caller decides whether that stops the install.
set -uo pipefail

purpose="$1"; shift
if ! command -v apt-get >/dev/null 2>&1; then
  echo "no apt-get here: install $* to run $purpose; those tests will skip" >&2
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if sudo -n true 2>/dev/null; then SUDO="sudo -n"; else
    echo "installing $* needs root or passwordless sudo: $purpose will skip" >&2
    exit 0
  fi
fi
echo "installing $* ($purpose)" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get -o DPkg::Lock::Timeout=900 update -qq >&2 &&
  $SUDO apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends "$@" >&2

#!/usr/bin/env bash
# Install Debian's Chromium for the leaderboard's browser tests (driven by Playwright with
# executable_path, so Playwright's own browser download is never needed). Root or sudo
# installs it; elsewhere this says so and the browser tests skip, naming the reason.
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then exit 0; fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if sudo -n true 2>/dev/null; then SUDO="sudo"; else
    echo "chromium is not installed and installing it needs root: the browser tests will be skipped" >&2
    exit 0
  fi
fi
echo "installing Debian's chromium (browser tests of the leaderboard page)" >&2
$SUDO apt-get -o DPkg::Lock::Timeout=900 update -qq >&2
$SUDO apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends chromium >&2

#!/usr/bin/env bash
# Install Debian's Chromium for the leaderboard's browser tests (driven by Playwright with
# executable_path, so Playwright's own browser download is never needed). Without the
# rights to install it, the browser tests skip, naming the reason; an apt failure stops
# `make install`.
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then exit 0; fi
exec "$(dirname "$0")/apt_install.sh" "the browser tests of the leaderboard page" chromium

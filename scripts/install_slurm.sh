#!/usr/bin/env bash
# Install Debian's Slurm (slurm-wlm, munge) for the sweep's Slurm test, when it is missing
# and packages can be installed without a password (root, or passwordless sudo). Anywhere
# else it only says why it did nothing and exits 0: the test then skips with that reason,
# and a cluster's login node, which has its own Slurm, is left alone.
set -uo pipefail

PACKAGES="slurm-wlm slurm-client munge"
have_all() {
  for command in slurmctld slurmd munged sbatch squeue; do
    command -v "$command" >/dev/null 2>&1 || [ -x "/usr/sbin/$command" ] || return 1
  done
}

if have_all; then exit 0; fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install_slurm: no apt-get here; the Slurm test will skip (install slurm-wlm and munge to run it)" >&2
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if sudo -n true 2>/dev/null; then SUDO="sudo -n"; else
    echo "install_slurm: not root and no passwordless sudo; the Slurm test will skip (install $PACKAGES to run it)" >&2
    exit 0
  fi
fi
echo "install_slurm: installing $PACKAGES (for the sweep's Slurm test)" >&2
export DEBIAN_FRONTEND=noninteractive
if ! { $SUDO apt-get -o DPkg::Lock::Timeout=900 update -qq >&2 &&
       $SUDO apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends $PACKAGES >&2; }; then
  echo "install_slurm: apt-get failed; the Slurm test will skip" >&2
fi
exit 0

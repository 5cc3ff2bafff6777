#!/usr/bin/env bash
# Install Debian's Slurm (slurm-wlm, munge) for the sweep's Slurm test, when it is missing.
# Anywhere it cannot (no apt, no rights, apt failing) it says why and exits 0: the test
# then skips with that reason, and a cluster's login node, which has its own Slurm, is left
# alone.
set -uo pipefail

have_all() {
  for command in slurmctld slurmd munged sbatch squeue; do
    command -v "$command" >/dev/null 2>&1 || [ -x "/usr/sbin/$command" ] || return 1
  done
}

if have_all; then exit 0; fi
"$(dirname "$0")/apt_install.sh" "the sweep's Slurm test" slurm-wlm slurm-client munge ||
  echo "install_slurm: apt-get failed; the Slurm test will skip" >&2
exit 0

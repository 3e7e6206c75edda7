#!/usr/bin/env bash
#SBATCH --job-name=tcdist
#SBATCH --ntasks=1
#SBATCH --output=tcdist-%j.out
# Count triangles as a batch job:   sbatch slurm/cluster.sh [GRAPH] [tcdist count options]
# e.g.                              sbatch --wait slurm/cluster.sh rmat:22 --parts 4 --json
# One rank counts every part one after another (LSTC's single-GPU mode, or the CPU kernels
# without a GPU). TCDIST_PYTHON names the interpreter that has tcdist installed.
set -euo pipefail
exec srun "${TCDIST_PYTHON:-python3}" -m tcdist count "$@"

#!/usr/bin/env bash
#SBATCH --job-name=tcdist
#SBATCH --nodes=1
#SBATCH --ntasks=2
#SBATCH --gpus-per-task=1
#SBATCH --time=01:00:00
#SBATCH --output=tcdist-%j.out
#
# Count triangles as an MPI batch job, one rank per GPU. Who reads the graph is tcdist's --read
# (docs/ranks.md). Under the default, auto, GPU ranks each parse their byte range of a plain text
# or Matrix Market file on their GPU and rank 0 builds the graph from those edges (a generator,
# a graph file or gzip is read by rank 0 alone); CPU ranks leave the reading to rank 0 on one
# host and read their shares on several. --read ranks makes every rank read its share and build
# its rows. Then every rank counts its share of the graph, or builds and counts its own parts,
# and the counts are reduced:
#
#   sbatch slurm/cluster.sh [GRAPH] [tcdist count options]
#   sbatch --nodes=2 --ntasks-per-node=4 slurm/cluster.sh rmat:26 --parts 32 --schedule dynamic
#   sbatch --gpus-per-task=0 slurm/cluster.sh graph.txt.gz --backend cpu      # no GPUs
#
# Nodes, tasks, GPUs and time come from the #SBATCH lines above; sbatch options on the
# command line (or SBATCH_* variables, e.g. SBATCH_TIMELIMIT) override them. The summary
# and the JSON record go to $TCDIST_RESULTS/tcdist-JOBID.{txt,json} (default: tcdist-results/
# in the directory you submit from); Slurm's own log to tcdist-JOBID.out.
#
# Adapting it to a site:
#   partition, account, QoS   sbatch -p gpu -A myproject --qos=normal slurm/cluster.sh ...
#                             (or add #SBATCH lines, or set SBATCH_PARTITION / SBATCH_ACCOUNT)
#   modules, environment      TCDIST_SETUP='module load cuda/12 openmpi/4; source ~/tcdist/.venv/bin/activate'
#   interpreter               TCDIST_PYTHON=/path/to/python (default: python3 on the PATH)
#   launcher                  TCDIST_LAUNCH='srun --mpi=pmix' (default 'srun': the site's MpiDefault;
#                             mpi4py must be built against an MPI that speaks it), or
#                             TCDIST_LAUNCH='mpirun' to let the MPI library start the ranks
#   GPU binding               each rank binds GPU (node-local rank mod visible GPUs); with
#                             --gpus-per-task=1 Slurm shows each task only its own GPU
# tcdist checks that MPI sees as many ranks as srun started: a launcher that starts
# unconnected single-rank processes is refused instead of counting the graph R times.
set -euo pipefail
eval "${TCDIST_SETUP:-}"
results=${TCDIST_RESULTS:-${SLURM_SUBMIT_DIR:-$PWD}/tcdist-results}
mkdir -p "$results"
base="$results/tcdist-${SLURM_JOB_ID:-$$}"
# shellcheck disable=SC2086  # TCDIST_LAUNCH is a command with its options
${TCDIST_LAUNCH:-srun} "${TCDIST_PYTHON:-python3}" -m tcdist count "$@" --json-file "$base.json" | tee "$base.txt"

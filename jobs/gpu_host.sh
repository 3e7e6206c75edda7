#!/usr/bin/env bash
# On a lent GPU host, from the repository root:  bash jobs/gpu_host.sh tests|bench|budget|kernels|peers|e2e|ingest|gpu-ingest|parts|lstc|scaling [options]
# Installs the carried wheels (.whl/: pymetis, networkit), points the tests at the carried datasets
# (.datasets/) and the host's Open MPI, then runs the GPU and MPI tests or the rank benchmark
# (peers: the published codes' sources carried in .peers/, jobs/bench_peers.py says which).
# Logs and results go to $OUT (the device tool brings them back).
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1 TCDIST_DATASETS=$PWD/.datasets
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
export TCDIST_MPIEXEC="mpirun --allow-run-as-root --oversubscribe --bind-to none"
nvidia-smi -L
what=$1; shift
case $what in
  tests) python3 -m pytest -m "gpu or mpi" -q -p no:cacheprovider "$@" 2>&1 | tee "$OUT/pytest-gpu-mpi.log" ;;
  bench) (cd jobs && python3 bench_ranks.py --mpirun "$TCDIST_MPIEXEC" "$@") 2>&1 | tee "$OUT/bench.log" ;;
  budget) (cd jobs && python3 bench_budget.py "$@") 2>&1 | tee "$OUT/budget.log" ;;
  kernels) (cd jobs && python3 bench_gpu.py "$@") 2>&1 | tee "$OUT/kernels.log" ;;
  peers) (cd jobs && python3 bench_peers.py --peers ../.peers "$@") 2>&1 | tee "$OUT/peers.log" ;;
  e2e) (cd jobs && python3 bench_e2e.py --out "$OUT" "$@") 2>&1 | tee "$OUT/e2e.log" ;;
  ingest) ranks=$1; shift  # ingest R [bench_ingest.py's options]
    (cd jobs && $TCDIST_MPIEXEC -n "$ranks" python3 bench_ingest.py --out "$OUT/ingest-r$ranks.json" "$@") 2>&1 | tee "$OUT/ingest-r$ranks.log" ;;
  parts) (cd jobs && python3 bench_host_parts.py --out "$OUT" "$@") 2>&1 | tee "$OUT/host-parts.log" ;;
  lstc) (cd jobs && python3 bench_parts.py --out "$OUT/lstc-parts.json" "$@") 2>&1 | tee "$OUT/lstc-parts.log" ;;
  scaling)  # GROUP KIND: one call's share of the 1-4 GPU rows (one process, mpirun -n 1, 2 and 4 GPUs), each under 600 s
    group=$1 kind=$2 w=/tmp/scaling
    rows="--end-to-end --ranks 1 2 4 --launched-one --job-timeout 240 --device $kind --work $w"
    case $group in
      text) (cd jobs && python3 bench_ranks.py --mpirun "$TCDIST_MPIEXEC" $rows --graphs rmat:25 rmat:26 --forms txt \
              --out "$OUT/scaling-text.json") 2>&1 | tee "$OUT/scaling-text.log" ;;
      h5) (cd jobs && python3 bench_ranks.py --mpirun "$TCDIST_MPIEXEC" $rows --graphs rmat:27 --forms h5 \
              --out "$OUT/scaling-h5.json") 2>&1 | tee "$OUT/scaling-h5.log" ;;
      spec) (cd jobs && python3 bench_ranks.py --mpirun "$TCDIST_MPIEXEC" $rows --graphs rmat:28 --forms spec \
              --out "$OUT/scaling-spec.json") 2>&1 | tee "$OUT/scaling-spec.log" ;;
      big) (cd jobs && python3 bench_ranks.py --mpirun "$TCDIST_MPIEXEC" --end-to-end --ranks 4 --repeat 1 \
              --job-timeout 200 --device "$kind" --work $w --graphs rmat:29 --forms spec \
              --out "$OUT/scaling-big.json") 2>&1 | tee "$OUT/scaling-big.log" ;;
      store) (cd jobs && python3 bench_parts.py --device "$kind" --work $w --rows --mpirun "$TCDIST_MPIEXEC" \
              --out "$OUT/scaling-store.json") 2>&1 | tee "$OUT/scaling-store.log" ;;
    esac ;;
  gpu-ingest)  # [bench_gpu_ingest.py's options]: NCCL's version, one process against ranks building on their GPUs
    python3 -c "from cupy.cuda import nccl; print(nccl.available, nccl.get_version())" 2>&1 | tee "$OUT/nccl.log"
    (cd jobs && python3 bench_gpu_ingest.py --mpirun "$TCDIST_MPIEXEC" --out "$OUT/gpu-ingest.json" "$@") 2>&1 | tee "$OUT/gpu-ingest.log" ;;
esac

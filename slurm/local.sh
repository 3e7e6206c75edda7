#!/usr/bin/env bash
# slurm/local.sh — a REAL single-host Slurm cluster (Debian 12 packages, Slurm 22.05)
# for CI / local testing of `sbatch` scripts.  Needs root; no systemd needed.
#
#   slurm/local.sh start    install (if missing) + configure + start munged/slurmctld/slurmd
#                           (idempotent: if our daemons are already up, it just checks them)
#   slurm/local.sh status   show our recorded PIDs and sinfo
#   slurm/local.sh test     smoke test: sbatch --wait a 2-task srun job
#   slurm/local.sh stop     cancel jobs, kill ONLY the PIDs recorded in $SLURM_LOCAL_DIR/pids
#   slurm/local.sh clean    stop + remove $SLURM_LOCAL_DIR (state, spool, logs)
#
# Knobs (environment variables, all optional):
#   SLURM_LOCAL_DIR=/tmp/slurm-local  state/spool/logs/pidfile
#   SLURM_LOCAL_NODES=1               number of (fake) nodes = slurmd daemons on this host
#   SLURM_LOCAL_CPUS=$(nproc)         CPUs advertised per node (may exceed real cores)
#   SLURM_LOCAL_MEM_MB=<90% of RAM>   RealMemory advertised per node
#   SLURM_LOCAL_GPUS=0                fake GPUs per node (gres/gpu backed by /dev/null links)
#   SLURM_LOCAL_PARTITIONS=debug      space-separated partition names (first = default),
#                                     all containing all nodes
#   SLURM_LOCAL_MPI_DEFAULT=pmi2      MpiDefault (pmi2 is what the PyPI mpich wheel speaks)
#   SLURM_LOCAL_AUTH=munge            munge | none
#   SLURM_LOCAL_CONF=/etc/slurm/slurm.conf   where to write the config (the default path
#                                     means plain `sbatch`/`srun` need no SLURM_CONF)
set -euo pipefail

DIR=${SLURM_LOCAL_DIR:-/tmp/slurm-local}
NODES=${SLURM_LOCAL_NODES:-1}
CPUS=${SLURM_LOCAL_CPUS:-$(nproc)}
MEM_MB=${SLURM_LOCAL_MEM_MB:-$(awk '/MemTotal/ {printf "%d", $2/1024*0.9}' /proc/meminfo)}
GPUS=${SLURM_LOCAL_GPUS:-0}
PARTS=${SLURM_LOCAL_PARTITIONS:-debug}
MPI_DEFAULT=${SLURM_LOCAL_MPI_DEFAULT:-pmi2}
AUTH=${SLURM_LOCAL_AUTH:-munge}
CONF=${SLURM_LOCAL_CONF:-/etc/slurm/slurm.conf}
CONFDIR=$(dirname "$CONF")
PIDS=$DIR/pids
HOST=$(hostname -s)
export PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH
# only the CLI tools need this; harmless when CONF is the default path
export SLURM_CONF=$CONF

log() { printf '[slurm-local] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

node_names() {   # one name per line
  if [ "$NODES" -eq 1 ]; then echo "$HOST"; else seq -f "n%g" 1 "$NODES"; fi
}

# ---------------------------------------------------------------- pid bookkeeping
# $PIDS lines: "<name> <pid> <comm>"; only processes this script started are recorded.
alive() {  # alive PID COMM  -> true if PID runs and its comm is COMM (guards PID reuse)
  [ -r "/proc/$1/comm" ] && [ "$(cat "/proc/$1/comm" 2>/dev/null)" = "$2" ] &&
    ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null
}
record() { echo "$1 $2 $3" >> "$PIDS"; log "started $1 pid=$2"; }
all_recorded_alive() {
  [ -s "$PIDS" ] || return 1
  local n p c
  while read -r n p c; do alive "$p" "$c" || return 1; done < "$PIDS"
}
wait_pidfile() {  # wait_pidfile FILE -> echo pid
  local i
  for i in $(seq 100); do
    if [ -s "$1" ]; then cat "$1"; return 0; fi
    sleep 0.1
  done
  return 1
}
kill_recorded() {
  [ -f "$PIDS" ] || { log "no pidfile $PIDS: nothing to stop"; return 0; }
  local n p c i lines
  # stop in reverse start order (slurmd, slurmctld, munged)
  lines=$(tac "$PIDS")
  while read -r n p c; do
    [ -n "${p:-}" ] || continue
    if alive "$p" "$c"; then
      kill -TERM "$p" 2>/dev/null || true
      for i in $(seq 100); do alive "$p" "$c" || break; sleep 0.1; done
      if alive "$p" "$c"; then log "$n pid=$p ignored SIGTERM, sending SIGKILL"; kill -KILL "$p" || true; fi
      log "stopped $n pid=$p"
    else
      log "$n pid=$p not running"
    fi
  done <<< "$lines"
  rm -f "$PIDS"
}

# ---------------------------------------------------------------- install
install_pkgs() {
  local need=()
  [ -x /usr/sbin/slurmctld ] || need+=(slurmctld)
  [ -x /usr/sbin/slurmd ] || need+=(slurmd)
  command -v sbatch >/dev/null || need+=(slurm-client)
  if [ "$AUTH" = munge ]; then [ -x /usr/sbin/munged ] || need+=(munge); fi
  [ ${#need[@]} -eq 0 ] && return 0
  log "installing ${need[*]} (apt)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q </dev/null >/dev/null
  # --no-install-recommends: 8 packages instead of ~42 (no hdf5/influx/rocm plugins).
  # Without systemd (or with policy-rc.d) the packages' services are not started.
  apt-get install -y -q --no-install-recommends "${need[@]}" </dev/null >/dev/null
}

# ---------------------------------------------------------------- munge
start_munge() {
  [ "$AUTH" = munge ] || return 0
  if munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; then
    log "a working munged is already running (not started by us; left alone)"
    return 0
  fi
  if [ ! -s /etc/munge/munge.key ]; then
    log "creating /etc/munge/munge.key"
    install -d -o munge -g munge -m 0700 /etc/munge
    dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
  fi
  chown munge:munge /etc/munge/munge.key; chmod 0400 /etc/munge/munge.key
  install -d -o munge -g munge -m 0755 /run/munge
  install -d -o munge -g munge -m 0700 /var/log/munge /var/lib/munge
  rm -f /run/munge/munged.pid
  # munged daemonizes itself; systemd would run it as User=munge, so do the same.
  runuser -u munge -- /usr/sbin/munged </dev/null || die "munged failed to start (see /var/log/munge/munged.log)"
  local pid; pid=$(wait_pidfile /run/munge/munged.pid) || die "munged did not write its pidfile"
  record munged "$pid" munged
  for _ in $(seq 50); do munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1 && return 0; sleep 0.1; done
  die "munge round trip failed"
}

# ---------------------------------------------------------------- config
write_conf() {
  mkdir -p "$CONFDIR" "$DIR"/{state,spool,log}
  if [ -f "$CONF" ] && ! grep -q '^# generated by slurm-local.sh' "$CONF"; then
    cp -n "$CONF" "$CONF.orig-before-slurm-local" && log "backed up existing $CONF"
  fi
  local gresline="" nodeline part first=1 partlines=""
  if [ "$GPUS" -gt 0 ]; then
    gresline="Gres=gpu:$GPUS"
    # gres/gpu needs File= entries that are character devices, else the GPUs are dropped
    # ("Removing file-less GPU") or rejected ("not a valid character or block device").
    # Symlinks to /dev/null are accepted.  No real GPU is involved.
    mkdir -p "$DIR/fakegpu"
    : > "$CONFDIR/gres.conf.new"
    echo "# generated by slurm-local.sh: FAKE GPUs" >> "$CONFDIR/gres.conf.new"
    local n i
    for n in $(node_names); do
      for i in $(seq 0 $((GPUS - 1))); do ln -sfn /dev/null "$DIR/fakegpu/$n-nvidia$i"; done
      echo "NodeName=$n Name=gpu File=$DIR/fakegpu/$n-nvidia[0-$((GPUS - 1))]" >> "$CONFDIR/gres.conf.new"
    done
    mv "$CONFDIR/gres.conf.new" "$CONFDIR/gres.conf"
  else
    rm -f "$CONFDIR/gres.conf"
  fi
  if [ "$NODES" -eq 1 ]; then
    nodeline="NodeName=$HOST NodeAddr=127.0.0.1 Port=6818"
  else
    nodeline="NodeName=n[1-$NODES] NodeHostname=$HOST NodeAddr=127.0.0.1 Port=17001-$((17000 + NODES))"
  fi
  for part in $PARTS; do
    if [ $first -eq 1 ]; then def=YES; first=0; else def=NO; fi
    partlines+="PartitionName=$part Nodes=ALL Default=$def MaxTime=INFINITE State=UP"$'\n'
  done
  cat > "$CONF.new" <<EOF
# generated by slurm-local.sh — single-host test cluster, NOT for production
ClusterName=local
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmctldPort=6817
SlurmdPort=6818
AuthType=auth/$AUTH
CredType=cred/$AUTH
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool/slurmd-%n
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd-%n.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd-%n.log
# no cgroups: track processes via /proc, no task binding/confinement
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MailProg=/bin/true
SchedulerType=sched/backfill
# default batch_sched_delay=3 delays every batch job start by up to 3 s
SchedulerParameters=batch_sched_delay=0
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
# let the configured CPUs/RealMemory exceed (or differ from) the real hardware
SlurmdParameters=config_overrides
MpiDefault=$MPI_DEFAULT
GresTypes=gpu
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
# sbatch --wait polls after 2 s and then waits 4x longer each time (up to 32 s) while the wait is
# below MinJobAge/2. The default of 300 gives polls at 2, 10, 42, 74... s, so an 11 s job took 42 s.
# With 5 it polls every 2 s. 0 is refused by 22.05 ("MinJobAge must be at least 2"). Finished jobs
# then vanish from scontrol/squeue after about 5-60 s (there is no sacct without slurmdbd).
MinJobAge=5
KillWait=5
Waittime=0
$nodeline CPUs=$CPUS RealMemory=$MEM_MB $gresline State=UNKNOWN
$partlines
EOF
  mv "$CONF.new" "$CONF"
  # slurmd always loads a cgroup plugin (even with proctrack/linuxproc + task/none) and a
  # failed init is FATAL.  autodetect picks v1 on hybrid hosts like this one; on a pure
  # cgroup-v2 host without systemd, IgnoreSystemd=yes stops it from needing dbus/systemd.
  if [ ! -f "$CONFDIR/cgroup.conf" ] || grep -q '^# generated by slurm-local.sh' "$CONFDIR/cgroup.conf"; then
    printf '# generated by slurm-local.sh\nCgroupPlugin=autodetect\nIgnoreSystemd=yes\n' > "$CONFDIR/cgroup.conf"
  fi
}

# ---------------------------------------------------------------- start / wait
logtail() { { grep -E "fatal|error" "$DIR/log/$1" | grep -v pmix | tail -n 5; } >&2 2>/dev/null || true; }

wait_nodes_idle() {
  local i states n p c
  for i in $(seq 120); do
    while read -r n p c; do
      alive "$p" "$c" || { [ "$n" = munged ] || logtail "$n.log"; die "$n (pid $p) died"; }
    done < "$PIDS"
    states=$(sinfo -h -N -o '%t' 2>/dev/null | sort -u | tr '\n' ' ')
    case "$states" in
      "idle "|"mix "|"alloc ") return 0 ;;
      *drain*|*inval*|*down*)
        [ "$i" -gt 10 ] && scontrol update nodename=ALL state=resume 2>/dev/null || true ;;
    esac
    sleep 0.5
  done
  sinfo -N >&2 || true
  return 1
}

knobs() { echo "nodes=$NODES cpus=$CPUS mem=$MEM_MB gpus=$GPUS parts=$PARTS mpi=$MPI_DEFAULT auth=$AUTH conf=$CONF host=$HOST"; }

start() {
  if all_recorded_alive; then
    if [ "$(cat "$DIR/knobs" 2>/dev/null)" = "$(knobs)" ]; then
      log "already running with the same settings (recorded PIDs alive):"; cat "$PIDS" >&2
      wait_nodes_idle || die "daemons alive but nodes not idle"
      sinfo; return 0
    fi
    log "running with different settings, restarting"; stop
  fi
  if [ -s "$PIDS" ]; then log "partial/stale previous start, stopping leftovers"; kill_recorded; fi
  [ "$(id -u)" -eq 0 ] || die "must run as root"
  install_pkgs
  mkdir -p "$DIR"; : > "$PIDS"
  # hydra (mpiexec) and slurm look up this host's name: make sure it resolves
  if ! getent hosts "$HOST" >/dev/null; then
    log "adding '127.0.0.1 $HOST' to /etc/hosts"; echo "127.0.0.1 $HOST" >> /etc/hosts
  fi
  start_munge
  write_conf
  rm -f "$DIR"/slurmctld.pid "$DIR"/slurmd-*.pid
  local f
  for f in "$DIR"/log/*.log; do [ -f "$f" ] && mv -f "$f" "$f.prev"; done   # fresh logs per start
  # -c: start from a clean state (no old jobs, no stale DRAIN reasons). Daemonizes itself.
  /usr/sbin/slurmctld -c -f "$CONF" </dev/null || { logtail slurmctld.log; die "slurmctld failed to start"; }
  local pid; pid=$(wait_pidfile "$DIR/slurmctld.pid") || die "slurmctld did not start; see $DIR/log/slurmctld.log"
  record slurmctld "$pid" slurmctld
  for _ in $(seq 100); do scontrol ping 2>/dev/null | grep -q UP && break; sleep 0.1; done
  local n
  for n in $(node_names); do
    mkdir -p "$DIR/spool/slurmd-$n"   # avoids a (harmless) "Domain socket directory" error
    /usr/sbin/slurmd -N "$n" -f "$CONF" </dev/null || { logtail "slurmd-$n.log"; die "slurmd $n failed to start"; }
    pid=$(wait_pidfile "$DIR/slurmd-$n.pid") || die "slurmd $n did not start; see $DIR/log/slurmd-$n.log"
    record "slurmd-$n" "$pid" slurmd
  done
  wait_nodes_idle || die "nodes did not become idle; see $DIR/log/"
  # slurmctld's first scheduling pass comes about 3 s after it starts; jobs submitted before that just wait.
  # Wait for it here so that the first `sbatch --wait` is not slowed by it (best effort).
  for _ in $(seq 100); do grep -q 'SchedulerParameters=' "$DIR/log/slurmctld.log" 2>/dev/null && break; sleep 0.1; done
  knobs > "$DIR/knobs"
  log "up. PIDs (name pid comm) in $PIDS:"; cat "$PIDS"
  sinfo
}

stop() {
  if command -v squeue >/dev/null && [ -f "$CONF" ] && scontrol ping 2>/dev/null | grep -q UP; then
    local jobs; jobs=$(squeue -h -o %A 2>/dev/null || true)
    if [ -n "$jobs" ]; then
      log "cancelling jobs: $(echo $jobs)"; scancel $jobs || true
      for _ in $(seq 50); do [ -z "$(squeue -h -o %A 2>/dev/null)" ] && break; sleep 0.2; done
    fi
  fi
  kill_recorded
}

smoke_test() {
  local out; out=$(mktemp /tmp/slurm-local-test.XXXXXX)
  local script; script=$(mktemp /tmp/slurm-local-job.XXXXXX)
  printf '#!/bin/bash\n#SBATCH -n 2\n#SBATCH -t 1\nsrun -n 2 hostname\n' > "$script"
  sbatch --wait -o "$out" "$script" >/dev/null
  cat "$out"
  [ "$(grep -c . "$out")" -eq 2 ] || die "smoke test: expected 2 lines of output"
  rm -f "$out" "$script"
  log "smoke test passed"
}

case "${1:-start}" in
  start)  start ;;
  stop)   stop ;;
  restart) stop; start ;;
  status) if all_recorded_alive; then cat "$PIDS"; sinfo; else log "not (fully) running"; [ -f "$PIDS" ] && cat "$PIDS"; exit 1; fi ;;
  test)   smoke_test ;;
  clean)  stop; rm -rf "$DIR"; log "removed $DIR" ;;
  *) echo "usage: $0 {start|stop|restart|status|test|clean}" >&2; exit 2 ;;
esac

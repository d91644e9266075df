#!/usr/bin/env bash
# Summaries per second through 1 and 2 `strata serve` (ServeCores), on one Redis and on a 3-master Redis Cluster
# (issue 49 item 5): starts a redis-server and a 3-master cluster (no persistence, no replicas) on free loopback
# ports, runs strata_bench_serve on each with SERVES 1 and 2, prints its lines and the CPU time the Redis servers
# spent on each run (INFO cpu, publish and ingest together), and stops the servers.
# usage: bench/serve_scaling.sh BUILD_DIR [RANKS=1000] [STEPS=50] [JOBS=6]
# Every run publishes JOBS jobs of RANKS x STEPS summaries (job k on the k-th sixth of the slot space: two jobs
# per master, each serve one job on each master). Nothing is left running or on disk (a temporary directory).
set -euo pipefail
build=${1:?usage: bench/serve_scaling.sh BUILD_DIR [RANKS] [STEPS] [JOBS]}
ranks=${2:-1000}
steps=${3:-50}
jobs=${4:-6}
bench="$build/strata_bench_serve"
tmp=$(mktemp -d /tmp/strata-serve-scaling-XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

free_port() {  # a free loopback port whose cluster bus port (+10000) is free too
  python3 -c 'import socket
while True:
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]
    if p + 10000 > 65535: continue
    t = socket.socket()
    try:
        t.bind(("127.0.0.1", p + 10000)); print(p); break
    except OSError: pass'
}

start_redis() {  # PORT [extra options]
  local port=$1
  shift
  mkdir -p "$tmp/$port"
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$tmp/$port" \
    --logfile redis.log "$@" &
  pids+=($!)
  for _ in $(seq 100); do
    redis-cli -p "$port" PING 2>/dev/null | grep -q PONG && return 0
    sleep 0.05
  done
  echo "redis-server on $port did not start" >&2
  return 1
}

one=$(free_port)
start_redis "$one"
ports=()
for _ in 1 2 3; do
  p=$(free_port)
  start_redis "$p" --cluster-enabled yes --cluster-config-file nodes.conf
  ports+=("$p")
done
redis-cli --cluster create "${ports[@]/#/127.0.0.1:}" --cluster-replicas 0 --cluster-yes >/dev/null
until redis-cli -p "${ports[0]}" CLUSTER INFO | grep -q cluster_state:ok; do sleep 0.1; done

redis_cpu() {  # CPU seconds (user + system) the servers on these ports have used so far
  local sum=0
  for p in "$@"; do
    sum=$(redis-cli -p "$p" INFO cpu | tr -d '\r' |
      awk -F: -v s="$sum" '/^used_cpu_(user|sys):/ {s += $2} END {printf "%.3f", s}')
  done
  echo "$sum"
}

run() {  # URL SERVES PORTS...: one bench run and the Redis CPU time it cost
  local url=$1 serves=$2
  shift 2
  local before after
  before=$(redis_cpu "$@")
  "$bench" "$url" "$ranks" "$steps" "$serves" "$jobs"
  after=$(redis_cpu "$@")
  echo "redis CPU over publish + ingest: $(echo "$after - $before" | bc) s over $# server(s)"
}

echo "# $(date -u +%FT%TZ), commit $(git -C "$(dirname "$0")" rev-parse --short HEAD), $(nproc) cores," \
  "load $(cut -d' ' -f1-3 /proc/loadavg)"
for serves in 1 2; do
  run "redis://127.0.0.1:$one" "$serves" "$one"
  run "redis://127.0.0.1:${ports[0]},127.0.0.1:${ports[1]}" "$serves" "${ports[@]}"
done

#!/usr/bin/env bash
# Restarts one component of the cluster scripts/kube-up.sh started, with the same command line, and waits until it
# answers again: for fault tests (an API server that goes away mid-stream and comes back).
#
#   scripts/kube-restart.sh kube-apiserver
set -euo pipefail
dir=${SANDBOX_KUBE_DIR:-/tmp/dev-sandbox-kube}
name=${1:?usage: kube-restart.sh COMPONENT}
[ -f "$dir/cmd-$name" ] || { echo "[kube-restart] no component '$name' recorded in $dir" >&2; exit 1; }
pid=$(awk -v n="$name" '$1 == n {print $2}' "$dir/pids")
if [ -n "$pid" ]; then
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  kill -KILL -- "-$pid" 2>/dev/null || true
fi
eval "setsid $(cat "$dir/cmd-$name") >>\"$dir/logs/$name.log\" 2>&1 < /dev/null &"
new=$!
awk -v n="$name" -v p="$new" '$1 == n {$2 = p} {print}' "$dir/pids" > "$dir/pids.new" && mv "$dir/pids.new" "$dir/pids"
if [ "$name" = kube-apiserver ]; then
  token=$(cut -d, -f1 "$dir/pki/tokens.csv")
  ready=
  for _ in $(seq 1 300); do
    if curl -fsS --cacert "$dir/pki/apiserver.crt" -H "Authorization: Bearer $token" https://127.0.0.1:6443/readyz \
      >/dev/null 2>&1; then ready=1; break; fi
    sleep 0.2
  done
  [ -n "$ready" ] || { echo "[kube-restart] kube-apiserver did not answer within 60 s" >&2; exit 1; }
  # components of a cluster started with leader election exit when the API server is away ("leaderelection lost"):
  # start again, with their recorded command lines, those that did
  sleep 2
  for other in kube-controller-manager kube-scheduler; do
    [ -f "$dir/cmd-$other" ] || continue
    opid=$(awk -v n="$other" '$1 == n {print $2}' "$dir/pids")
    if [ -z "$opid" ] || ! kill -0 "$opid" 2>/dev/null; then
      echo "[kube-restart] $other had exited; starting it again" >&2
      eval "setsid $(cat "$dir/cmd-$other") >>\"$dir/logs/$other.log\" 2>&1 < /dev/null &"
      onew=$!
      awk -v n="$other" -v p="$onew" '$1 == n {$2 = p} {print}' "$dir/pids" > "$dir/pids.new" \
        && mv "$dir/pids.new" "$dir/pids"
    fi
  done
fi

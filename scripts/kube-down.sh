#!/usr/bin/env bash
# Stops the cluster scripts/kube-up.sh started and removes what it made: its pods' containers, the kubelet's mounts,
# the directories it created, iptables chains it added; restores the sysctls the kubelet changed. Safe to run twice.
set -uo pipefail
cd "$(dirname "$0")/.."
log() { printf '[kube-down] %s\n' "$*" >&2; }
dir=${SANDBOX_KUBE_DIR:-/tmp/dev-sandbox-kube}
[ -d "$dir" ] || { log "nothing recorded in $dir"; exit 0; }

stop() {  # name
  local pid
  pid=$(awk -v n="$1" '$1 == n {print $2}' "$dir/pids" 2>/dev/null)
  [ -n "$pid" ] || return 0
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.2; done
  log "$1 (pid $pid) did not stop within 10 s: killing it"
  kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null
}

# the kubelet first, so that it starts nothing more; then its pods' containers (dockershim labels every one of them)
stop kubelet
if docker info >/dev/null 2>&1; then
  ids=$(docker ps -aq --filter label=io.kubernetes.docker.type)
  if [ -n "$ids" ]; then
    log "removing $(wc -w <<<"$ids") pod container(s)"
    docker rm -f -v $ids >/dev/null 2>&1
  fi
fi
for c in kube-scheduler kube-controller-manager kube-apiserver etcd; do stop "$c"; done

# the kubelet's mounts (volumes of pods), deepest first
grep -F " $dir/" /proc/mounts | awk '{print $2}' | sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done

if [ -f "$dir/sysctls" ]; then
  while IFS='=' read -r key value; do sysctl -qw "$key=$value" >/dev/null 2>&1; done < "$dir/sysctls"
fi
for table in filter nat mangle; do
  iptables -t "$table" -S 2>/dev/null | awk '/^-N KUBE-/ {print $2}' | while read -r chain; do
    iptables -t "$table" -S 2>/dev/null | grep -E "^-A [A-Z-]+ .*-j $chain( |$)" | sed 's/^-A/-D/' \
      | while read -r rule; do eval iptables -t "$table" "$rule" 2>/dev/null; done
    iptables -t "$table" -F "$chain" 2>/dev/null
  done
  iptables -t "$table" -S 2>/dev/null | awk '/^-N KUBE-/ {print $2}' | while read -r chain; do
    iptables -t "$table" -X "$chain" 2>/dev/null
  done
done
[ -f "$dir/made-dirs" ] && while read -r d; do rm -rf "$d"; done < "$dir/made-dirs"
rm -rf "$dir"
log "stopped; removed $dir"

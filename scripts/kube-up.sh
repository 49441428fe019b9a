#!/usr/bin/env bash
# Starts a single-node Kubernetes cluster on this machine for the tests: etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler and a kubelet whose dockershim runs pods on the Docker daemon already running. All on 127.0.0.1.
# Then makes the namespace the tests use, the provider's Role (sandbox-kubernetes/src/main/kubernetes/role.yaml), a
# service account bound to it, and a kubeconfig that uses that account (never cluster admin).
#
#   eval "$(scripts/kube-up.sh | tail -n 1)"     # its last line is: export KUBECONFIG=<path>
#   scripts/kube-down.sh                          # stops it and removes what it made
#
# Binaries: scripts/kube-build.sh (built once from Debian's source package, then cached). Needs root.
# State and logs: $SANDBOX_KUBE_DIR (default /tmp/dev-sandbox-kube). Namespace: $SANDBOX_KUBE_NAMESPACE (sandbox-test).
set -euo pipefail
cd "$(dirname "$0")/.."
log() { printf '[kube-up] %s\n' "$*" >&2; }
fail() { printf '[kube-up] %s\n' "$*" >&2; exit 1; }

dir=${SANDBOX_KUBE_DIR:-/tmp/dev-sandbox-kube}
namespace=${SANDBOX_KUBE_NAMESPACE:-sandbox-test}
pause_image=dev.sandbox/kube-pause:1

if [ -f "$dir/pids" ]; then
  log "a cluster from an earlier run is recorded in $dir: stopping it first"
  bash scripts/kube-down.sh
fi
bin=$(bash scripts/kube-build.sh | tail -n 1)
[ -x "$bin/kube-apiserver" ] || fail "no kube-apiserver in $bin"
command -v etcd >/dev/null 2>&1 || { log "installing etcd-server"; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq etcd-server >/dev/null; }
command -v openssl >/dev/null 2>&1 || fail "openssl is needed"
docker info >/dev/null 2>&1 || fail "no Docker daemon answers: start it first"

mkdir -p "$dir"/{etcd,pki,kubelet,logs}
: > "$dir/pids"

# what the kubelet changes on the machine, to restore at kube-down
for d in /var/lib/dockershim /var/log/pods /var/log/containers; do
  [ -e "$d" ] || echo "$d" >> "$dir/made-dirs"
done
for s in kernel.panic kernel.panic_on_oops vm.overcommit_memory; do
  echo "$s=$(sysctl -n "$s")" >> "$dir/sysctls"
done

start() {  # name, command...
  local name=$1; shift
  printf '%q ' "$@" > "$dir/cmd-$name"
  setsid "$@" >"$dir/logs/$name.log" 2>&1 < /dev/null &
  echo "$name $!" >> "$dir/pids"
}
wait_for() {  # what, seconds, command...
  local what=$1 seconds=$2; shift 2
  for _ in $(seq 1 $((seconds * 5))); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  fail "$what did not come up within $seconds s; see $dir/logs"
}

# the pause image: a static program that waits for a signal (no image can be pulled here)
if ! docker image inspect "$pause_image" >/dev/null 2>&1; then
  log "building $pause_image"
  rootfs=$(mktemp -d)
  gcc -static -O2 -o "$rootfs/pause" scripts/kube/pause.c
  tar -C "$rootfs" -c pause | docker import --change 'ENTRYPOINT ["/pause"]' - "$pause_image" >/dev/null
  rm -rf "$rootfs"
fi

# credentials: the service-account signing key and the admin token (only the scripts and the components use it)
openssl genrsa -out "$dir/pki/sa.key" 2048 2>/dev/null
admin_token=$(openssl rand -hex 24)
echo "$admin_token,admin,admin,system:masters" > "$dir/pki/tokens.csv"
chmod 600 "$dir/pki/sa.key" "$dir/pki/tokens.csv"

log "starting etcd"
start etcd etcd --data-dir "$dir/etcd" --listen-client-urls http://127.0.0.1:2379 \
  --advertise-client-urls http://127.0.0.1:2379 --listen-peer-urls http://127.0.0.1:2380
wait_for etcd 30 curl -fsS http://127.0.0.1:2379/health

log "starting kube-apiserver ($(cat "$bin/VERSION"))"
start kube-apiserver "$bin/kube-apiserver" --etcd-servers=http://127.0.0.1:2379 --bind-address=127.0.0.1 \
  --secure-port=6443 --cert-dir="$dir/pki" --token-auth-file="$dir/pki/tokens.csv" --authorization-mode=Node,RBAC \
  --service-account-issuer=https://kubernetes.default.svc --service-account-key-file="$dir/pki/sa.key" \
  --service-account-signing-key-file="$dir/pki/sa.key" --service-cluster-ip-range=10.0.0.0/24 --insecure-port=0 \
  --kubelet-preferred-address-types=Hostname --enable-admission-plugins=NamespaceLifecycle,ServiceAccount,ResourceQuota,LimitRanger
api() {  # method, path, [json body]
  curl -fsS --cacert "$dir/pki/apiserver.crt" -H "Authorization: Bearer $admin_token" -X "$1" \
    -H 'Content-Type: application/json' ${3:+--data "$3"} "https://127.0.0.1:6443$2"
}
wait_for kube-apiserver 60 api GET /readyz

kubeconfig() {  # file, token
  cat > "$1" <<KC
apiVersion: v1
kind: Config
clusters:
- name: dev-sandbox-test
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority-data: $(base64 -w0 < "$dir/pki/apiserver.crt")
users:
- name: user
  user:
    token: $2
contexts:
- name: dev-sandbox-test
  context:
    cluster: dev-sandbox-test
    user: user
    namespace: $namespace
current-context: dev-sandbox-test
KC
  chmod 600 "$1"
}
kubeconfig "$dir/admin.kubeconfig" "$admin_token"

log "starting kube-controller-manager and kube-scheduler"
# one instance each, so no leader election: with it they exit ("leaderelection lost") when the API server is away for
# longer than the renew deadline, as in the fault test that restarts it (scripts/kube-restart.sh)
start kube-controller-manager "$bin/kube-controller-manager" --kubeconfig="$dir/admin.kubeconfig" \
  --service-account-private-key-file="$dir/pki/sa.key" --root-ca-file="$dir/pki/apiserver.crt" \
  --controllers='*,-nodeipam' --use-service-account-credentials=false --bind-address=127.0.0.1 --port=0 \
  --leader-elect=false
start kube-scheduler "$bin/kube-scheduler" --kubeconfig="$dir/admin.kubeconfig" --bind-address=127.0.0.1 --port=0 \
  --leader-elect=false

log "starting the kubelet on the Docker daemon ($(docker info --format '{{.CgroupDriver}}') cgroups)"
start kubelet "$bin/kubelet" --kubeconfig="$dir/admin.kubeconfig" --hostname-override=localhost \
  --address=127.0.0.1 --read-only-port=0 --container-runtime=docker --pod-infra-container-image="$pause_image" \
  --cgroup-driver="$(docker info --format '{{.CgroupDriver}}')" --fail-swap-on=false --cgroups-per-qos=false \
  --enforce-node-allocatable= --eviction-hard= --make-iptables-util-chains=false \
  --root-dir="$dir/kubelet" --cert-dir="$dir/kubelet/pki" --healthz-port=0 \
  --image-gc-high-threshold=100 --image-gc-low-threshold=99
node_ready() {
  api GET /api/v1/nodes/localhost | jq -e '.status.conditions[] | select(.type=="Ready" and .status=="True")'
}
wait_for "the node" 90 node_ready

log "namespace $namespace, the provider's Role, a service account bound to it"
api POST /api/v1/namespaces "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"$namespace\"}}" >/dev/null
role_json=$(python3 -c 'import sys, json, yaml; print(json.dumps(yaml.safe_load(sys.stdin)))' \
  < sandbox-kubernetes/src/main/kubernetes/role.yaml 2>/dev/null) \
  || role_json=$(kubectl create --dry-run=client -o json -f sandbox-kubernetes/src/main/kubernetes/role.yaml)
api POST "/apis/rbac.authorization.k8s.io/v1/namespaces/$namespace/roles" "$role_json" >/dev/null
api POST "/api/v1/namespaces/$namespace/serviceaccounts" \
  '{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"dev-sandbox-tests"}}' >/dev/null
api POST "/apis/rbac.authorization.k8s.io/v1/namespaces/$namespace/rolebindings" "$(cat <<JSON
{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"dev-sandbox-tests"},
 "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"dev-sandbox"},
 "subjects":[{"kind":"ServiceAccount","name":"dev-sandbox-tests","namespace":"$namespace"}]}
JSON
)" >/dev/null
sa_token() {
  local secret
  secret=$(api GET "/api/v1/namespaces/$namespace/serviceaccounts/dev-sandbox-tests" | jq -er '.secrets[0].name') || return 1
  api GET "/api/v1/namespaces/$namespace/secrets/$secret" | jq -er '.data.token' | base64 -d
}
wait_for "the service account's token" 60 sa_token
kubeconfig "$dir/kubeconfig" "$(sa_token)"
# the default service account's token must exist before pods can be admitted in the namespace
default_sa() { api GET "/api/v1/namespaces/$namespace/serviceaccounts/default" | jq -e '.secrets[0].name'; }
wait_for "the namespace's default service account" 60 default_sa

# two more namespaces for the fault tests: one where the same account is bound to the Role but a ResourceQuota
# allows no pod at all, and one where it holds no Role (every call is an RBAC denial)
api POST /api/v1/namespaces "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"$namespace-quota\"}}" >/dev/null
api POST /api/v1/namespaces "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"$namespace-denied\"}}" >/dev/null
api POST "/apis/rbac.authorization.k8s.io/v1/namespaces/$namespace-quota/roles" "$role_json" >/dev/null
api POST "/apis/rbac.authorization.k8s.io/v1/namespaces/$namespace-quota/rolebindings" "$(cat <<JSON
{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"dev-sandbox-tests"},
 "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"dev-sandbox"},
 "subjects":[{"kind":"ServiceAccount","name":"dev-sandbox-tests","namespace":"$namespace"}]}
JSON
)" >/dev/null
api POST "/api/v1/namespaces/$namespace-quota/resourcequotas" \
  '{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"no-pods"},"spec":{"hard":{"pods":"0"}}}' >/dev/null

log "ready: $(api GET /version | jq -r .gitVersion), node localhost, namespace $namespace (admin: $dir/admin.kubeconfig)"
echo "export KUBECONFIG=$dir/kubeconfig"

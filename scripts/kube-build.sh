#!/usr/bin/env bash
# Builds the Kubernetes server binaries the tests run against (v1.20.2, from Debian's source package `kubernetes`),
# offline, and caches them by source version so that a second run on the same machine reuses them.
#
#   scripts/kube-build.sh            # prints the directory holding kube-apiserver, kubelet, kube-scheduler,
#                                    # kube-controller-manager (last line of its output)
#
# Needs root (apt-get). Cache: $SANDBOX_KUBE_CACHE, default /var/cache/dev-sandbox/kubernetes.
# Two constants are patched before the build: this machine kind refuses a negative oom_score_adj even to root, and
# the kubelet's dockershim would then fail every pod's pause container (see the README's Kubernetes section).
set -euo pipefail

log() { printf '[kube-build] %s\n' "$*" >&2; }

cache_root=${SANDBOX_KUBE_CACHE:-/var/cache/dev-sandbox/kubernetes}
binaries=(kube-apiserver kubelet kube-scheduler kube-controller-manager)

apt_updated=false
apt_install() {
  if [ "$apt_updated" = false ]; then apt-get update -qq; apt_updated=true; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

# the source index, beside the binary one: a copy of the existing entry with Types: deb-src (no host named here)
src_list=/etc/apt/sources.list.d/dev-sandbox-deb-src.sources
if ! grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ /etc/apt/sources.list 2>/dev/null; then
  log "enabling the Debian source index ($src_list)"
  sed 's/^Types:.*/Types: deb-src/' /etc/apt/sources.list.d/debian.sources > "$src_list"
  apt-get update -qq
  apt_updated=true
fi

# which source version the index offers: the cache is keyed by it
version=$(apt-cache showsrc kubernetes 2>/dev/null | awk '/^Version:/ {print $2}' | sort -V | tail -n 1)
if [ -z "$version" ]; then
  echo "[kube-build] the source index offers no package 'kubernetes'" >&2
  exit 1
fi
patch_level=2  # raise when the patches below change: the cache is keyed by source version and patch level
out="$cache_root/$version-p$patch_level"
if [ -f "$out/.complete" ]; then
  log "cached: $out"
  echo "$out"
  exit 0
fi

need=()
[ -x /usr/lib/go-1.19/bin/go ] || need+=(golang-1.19-go golang-1.19-src)
command -v rsync >/dev/null 2>&1 || need+=(rsync)
command -v dpkg-source >/dev/null 2>&1 || need+=(dpkg-dev)
command -v make >/dev/null 2>&1 || need+=(make)
[ ${#need[@]} -eq 0 ] || { log "installing ${need[*]}"; apt_install "${need[@]}"; }

work=$(mktemp -d "${TMPDIR:-/tmp}/kube-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
log "fetching the source of kubernetes $version into $work"
(cd "$work" && apt-get source --download-only -qq "kubernetes=$version" >/dev/null)
dsc=$(ls "$work"/kubernetes_*.dsc)
(cd "$work" && dpkg-source -q -x "$dsc" src >/dev/null 2>&1)
tree="$work/src"

patch_const() {  # file, old, new
  grep -qF "$2" "$tree/$1" || { echo "[kube-build] $1 no longer holds '$2'" >&2; exit 1; }
  sed -i "s/$2/$3/" "$tree/$1"
}
patch_const pkg/kubelet/dockershim/docker_sandbox.go 'defaultSandboxOOMAdj int = -998' 'defaultSandboxOOMAdj int = 0'
patch_const pkg/kubelet/qos/policy.go 'guaranteedOOMScoreAdj int = -997' 'guaranteedOOMScoreAdj int = 0'

# The vendored github.com/modern-go/reflect2 v1.0.1 calls reflect.mapiterinit with the signature Go had before 1.18
# (it returned the iterator; since 1.18 the caller passes one in): built with Go 1.19 the apiserver then dies with
# SIGSEGV in aeshashbody the first time json-iterator encodes a map with omitempty. reflect2 v1.0.2 fixed it that way:
# the caller allocates the whole iterator (the runtime's hiter layout) and passes it.
python3 - "$tree/vendor/github.com/modern-go/reflect2" <<'PY'
import pathlib, sys
d = pathlib.Path(sys.argv[1])
link, umap = d / "unsafe_link.go", d / "unsafe_map.go"
s = link.read_text()
old_decl = "func mapiterinit(rtype unsafe.Pointer, m unsafe.Pointer) *hiter"
old_struct = """type hiter struct {
\tkey   unsafe.Pointer // Must be in first position.  Write nil to indicate iteration end (see cmd/internal/gc/range.go).
\tvalue unsafe.Pointer // Must be in second position (see cmd/internal/gc/range.go).
\t// rest fields are ignored
}"""
assert old_decl in s and old_struct in s, "reflect2's unsafe_link.go changed"
s = s.replace(old_decl, "func mapiterinit(rtype unsafe.Pointer, m unsafe.Pointer, it *hiter)")
s = s.replace(old_struct, """type hiter struct {
\tkey         unsafe.Pointer
\tvalue       unsafe.Pointer
\tt           unsafe.Pointer
\th           unsafe.Pointer
\tbuckets     unsafe.Pointer
\tbptr        unsafe.Pointer
\toverflow    *[]unsafe.Pointer
\toldoverflow *[]unsafe.Pointer
\tstartBucket uintptr
\toffset      uint8
\twrapped     bool
\tB           uint8
\ti           uint8
\tbucket      uintptr
\tcheckBucket uintptr
}""")
link.write_text(s)
m = umap.read_text()
old_iter = "\t\thiter:      mapiterinit(type2.rtype, *(*unsafe.Pointer)(obj)),\n"
assert old_iter in m, "reflect2's unsafe_map.go changed"
m = m.replace("func (type2 *UnsafeMapType) UnsafeIterate(obj unsafe.Pointer) MapIterator {\n\treturn &UnsafeMapIterator{\n" + old_iter,
              "func (type2 *UnsafeMapType) UnsafeIterate(obj unsafe.Pointer) MapIterator {\n\tvar it hiter\n"
              "\tmapiterinit(type2.rtype, *(*unsafe.Pointer)(obj), &it)\n\treturn &UnsafeMapIterator{\n\t\thiter:      &it,\n")
umap.write_text(m)
PY

git_version=v$(sed -n 's/.*really\([0-9.]*\).*/\1/p' <<<"$version")
[ "$git_version" != v ] || git_version=v${version%%[-+]*}
minor=$(cut -d. -f2 <<<"${git_version#v}")
log "building ${binaries[*]} ($git_version; about 800 CPU-seconds)"
start=$(date +%s)
for b in "${binaries[@]}"; do
  (cd "$tree" && PATH=/usr/lib/go-1.19/bin:$PATH KUBE_GIT_VERSION=$git_version KUBE_GIT_MAJOR=1 \
     KUBE_GIT_MINOR=$minor GOPROXY=off GOFLAGS=-mod=vendor GOCACHE="$work/gocache" \
     make WHAT="cmd/$b" >"$work/make-$b.log" 2>&1) \
    || { echo "[kube-build] building $b failed; the end of its log:" >&2; tail -n 30 "$work/make-$b.log" >&2; exit 1; }
  log "built $b ($(( $(date +%s) - start )) s so far)"
done
mkdir -p "$out"
for b in "${binaries[@]}"; do cp "$tree/_output/local/go/bin/$b" "$out/"; done
echo "$git_version" > "$out/VERSION"
touch "$out/.complete"
log "cached in $out"
echo "$out"

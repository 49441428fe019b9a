#!/usr/bin/env bash
# End-to-end test of sandbox-reaper against the real Docker daemon.
#   reaper-e2e.sh PATH/TO/sandbox-reaper
# Imports an image holding only the binary, creates session containers from sandbox-test:busybox (sleep 600),
# writes state files into a Docker volume, runs the reaper once in its own container with the socket and the volume
# mounted, and checks exactly the right sessions are gone. Everything it creates carries a run label and is removed
# on exit, pass or fail. Without a daemon it skips, unless CI=true (then it fails).
#
# The daemon is shared: the Docker provider's own reaper (dev-sandbox-reaper, one per daemon) lists every container
# labelled dev.sandbox.session and judges it by its own state store, so it would remove the sessions whose deadline
# or lease only this test's store extends (and the expired ones before this test's reaper could). Any provider, in
# any JVM, may start it again at any moment, so it cannot be kept stopped. Instead this test names its sessions with
# a label of its own (--session-label), which that reaper never lists; the deadline and lease labels are the real ones.
set -euo pipefail

BIN=${1:?usage: reaper-e2e.sh PATH/TO/sandbox-reaper}
TEST_IMAGE=${TEST_IMAGE:-sandbox-test:busybox}
SOCKET=${DOCKER_SOCKET:-/var/run/docker.sock}

say() { printf '[reaper-e2e] %s\n' "$*"; }
fail() { printf '[reaper-e2e] FAIL: %s\n' "$*" >&2; exit 1; }

if ! docker info >/dev/null 2>&1; then
  [ "${CI:-}" = true ] && fail "no Docker daemon answers (CI=true)"
  say "skipped: no Docker daemon"
  exit 0
fi
docker image inspect "$TEST_IMAGE" >/dev/null 2>&1 || fail "missing test image $TEST_IMAGE (scripts/test-image.sh)"

run="reaper-e2e-$$-$RANDOM"
run_label="dev.sandbox.test-run=$run"
session_label=dev.sandbox.reaper-e2e.session
image="sandbox-reaper-e2e:$run"
volume="$run-state"
tmp=$(mktemp -d)

cleanup() {
  local ids
  ids=$(docker ps -aq --filter "label=$run_label" 2>/dev/null || true)
  [ -z "$ids" ] || docker rm -f $ids >/dev/null || true
  docker volume rm -f "$volume" >/dev/null || true
  docker image rm -f "$image" >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT

# the image: one file, the static binary
mkdir "$tmp/root"
cp "$BIN" "$tmp/root/sandbox-reaper"
chmod 0755 "$tmp/root/sandbox-reaper"
tar -C "$tmp/root" -cf "$tmp/image.tar" sandbox-reaper
docker import --change 'ENTRYPOINT ["/sandbox-reaper"]' "$tmp/image.tar" "$image" >/dev/null
[ "$(tar -tf "$tmp/image.tar")" = sandbox-reaper ] || fail "the image tar holds more than the binary"

now=$(date +%s)
session() { # name, then extra --label arguments
  local name=$1
  shift
  docker run -d --label "$run_label" --label "$session_label=$run-$name" "$@" "$TEST_IMAGE" sleep 600 >/dev/null
}
session deadline --label "dev.sandbox.expires-at=$((now - 10))"
session lease --label dev.sandbox.expires-at=never --label dev.sandbox.lease-seconds=1
session renewed --label dev.sandbox.lease-seconds=1
session extended --label "dev.sandbox.expires-at=$((now - 10))"
session shortened --label dev.sandbox.expires-at=never
session running --label "dev.sandbox.expires-at=$((now + 600))"
docker run -d --label "$run_label" "$TEST_IMAGE" sleep 600 >/dev/null # unlabelled: not a session
# paused sessions past their deadline (docker pause, the cgroup freezer): the daemon kills a paused runc container
# on a forced removal but not a paused gVisor one, which the reaper unpauses first
session paused-runc --label "dev.sandbox.expires-at=$((now - 10))"
docker pause "$(docker ps -q --filter "label=$session_label=$run-paused-runc")" >/dev/null
if docker info --format '{{json .Runtimes}}' | grep -q '"runsc"'; then
  session paused-gvisor --runtime runsc --label "dev.sandbox.expires-at=$((now - 10))"
  docker pause "$(docker ps -q --filter "label=$session_label=$run-paused-gvisor")" >/dev/null
  paused_expected="paused-gvisor paused-runc"
else
  [ "${CI:-}" = true ] && fail "the daemon has no runsc runtime (CI=true)"
  say "no runsc runtime: the paused gVisor session is not tried"
  paused_expected="paused-runc"
fi
# a session whose process has ended (run in the foreground: it has exited when docker run returns)
docker run --label "$run_label" --label "$session_label=$run-exited" --label dev.sandbox.expires-at=never \
  "$TEST_IMAGE" true

# the state store, written the way the provider writes it
docker volume create --label "$run_label" "$volume" >/dev/null
docker run --rm --label "$run_label" -v "$volume:/state" "$TEST_IMAGE" sh -c "
  mkdir -p /state/deadlines /state/leases &&
  echo $((now + 600)) > /state/leases/$run-renewed &&
  echo $((now + 600)) > /state/deadlines/$run-extended &&
  echo $((now - 5)) > /state/deadlines/$run-shortened &&
  echo 1 > /state/deadlines/$run-gone && touch -d '2020-01-01 00:00:00' /state/deadlines/$run-gone &&
  echo 1 > /state/leases/$run-gone-recently"

# the unrenewed lease is Created + 1 s: wait (bounded) until the clock is past it
created=$(date -d "$(docker inspect -f '{{.Created}}' "$(docker ps -aq --filter "label=$session_label=$run-lease")")" +%s)
for _ in $(seq 1 50); do
  [ "$(date +%s)" -ge $((created + 1)) ] && break
  sleep 0.1
done

# a reaper as the daemon's lists dev.sandbox.session: it sees none of these sessions (it has no state store here)
seen=$(docker run --rm --label "$run_label" -v "$SOCKET:/var/run/docker.sock" "$image" --once --state /none \
  --filter-label "$run_label" 2>&1) || fail "the reaper without --session-label failed: $seen"
[ -z "$seen" ] || fail "a reaper without --session-label acted on this test's sessions: $seen"

set +e
out=$(docker run --name "$run-reaper" --label "$run_label" -v "$SOCKET:/var/run/docker.sock" -v "$volume:/state" \
  "$image" --once --session-label "$session_label" --filter-label "$run_label" 2>"$tmp/stderr")
code=$?
set -e
say "reaper output:"
printf '%s\n' "$out" | sed 's/^/  /'
sed 's/^/  stderr: /' "$tmp/stderr"
[ "$code" -eq 0 ] || fail "reaper exited $code"

left=$(docker ps -a --filter "label=$run_label" --filter "label=$session_label" \
  --format "{{.Label \"$session_label\"}}" | sed "s/^$run-//" | sort | tr '\n' ' ')
say "sessions left: $left"
[ "$left" = "extended renewed running " ] || fail "expected 'extended renewed running ' left, got '$left'"
unlabelled=$(docker ps -aq --filter "label=$run_label" --filter status=running | wc -l)
[ "$unlabelled" -eq 4 ] || fail "expected the unlabelled container and three sessions running, got $unlabelled"
for want in "removed $run-deadline (deadline)" "removed $run-lease (lease)" "removed $run-shortened (deadline)" \
  "removed $run-exited (exited)"; do
  grep -qxF "$want" <<<"$out" || fail "missing log line: $want"
done
for paused in $paused_expected; do
  grep -qxF "removed $run-$paused (deadline)" <<<"$out" || fail "the paused session $paused was not removed"
done
grep -qxF "collected deadlines/$run-gone" <<<"$out" || fail "the old state file of a gone session was not collected"
expected_lines=$((5 + $(wc -w <<<"$paused_expected")))
[ "$(wc -l <<<"$out")" -eq "$expected_lines" ] || fail "expected exactly $expected_lines log lines"
files=$(docker run --rm --label "$run_label" -v "$volume:/state" "$TEST_IMAGE" sh -c 'cd /state && ls deadlines leases' |
  sed "s/$run-//" | tr '\n' ' ')
say "state files left: $files"
[ "$files" = "deadlines: extended shortened  leases: gone-recently renewed " ] || fail "unexpected state files: $files"

# the long-running mode: it removes what ends later, and a SIGTERM (docker stop) ends it with status 0, not a kill
docker run -d --name "$run-loop" --label "$run_label" -v "$SOCKET:/var/run/docker.sock" -v "$volume:/state" \
  "$image" --interval-ms 100 --session-label "$session_label" --filter-label "$run_label" >/dev/null
docker run --label "$run_label" --label "$session_label=$run-later" "$TEST_IMAGE" true
for _ in $(seq 1 100); do
  docker logs "$run-loop" 2>/dev/null | grep -qxF "removed $run-later (exited)" && break
  sleep 0.1
done
docker logs "$run-loop" 2>/dev/null | grep -qxF "removed $run-later (exited)" || fail "the looping reaper did not remove $run-later"
docker stop -t 20 "$run-loop" >/dev/null
status=$(docker inspect -f '{{.State.ExitCode}}' "$run-loop")
[ "$status" = 0 ] || fail "the looping reaper exited $status on SIGTERM"
say "passed"

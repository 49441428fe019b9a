#!/usr/bin/env bash
# Builds the image the Docker tests run in, sandbox-test:busybox, from the host's busybox-static with
# `docker import` (no registry needed). Idempotent: does nothing when the image exists, unless --force is given.
#
#   scripts/test-image.sh            # build if missing
#   scripts/test-image.sh --force    # rebuild
#
# Needs: a reachable Docker daemon (DOCKER_HOST or /var/run/docker.sock) and a static busybox
# (Debian: apt-get install busybox-static; BUSYBOX=/path/to/busybox to use another one).
set -euo pipefail

IMAGE=${IMAGE:-sandbox-test:busybox}
BUSYBOX=${BUSYBOX:-/bin/busybox}

# the second image holds one file, the static busybox at /busybox: no shell, no directories, nothing else (the
# agent's tests run sandboxes in it)
ONE_PROGRAM=${ONE_PROGRAM:-sandbox-test:one-program}

if [ "${1:-}" != "--force" ] && docker image inspect "$IMAGE" >/dev/null 2>&1 \
    && docker image inspect "$ONE_PROGRAM" >/dev/null 2>&1; then
  echo "[test-image] $IMAGE and $ONE_PROGRAM exist"
  exit 0
fi

if [ ! -x "$BUSYBOX" ]; then
  echo "[test-image] no busybox at $BUSYBOX; install busybox-static or set BUSYBOX" >&2
  exit 1
fi
if ! "$BUSYBOX" true; then
  echo "[test-image] $BUSYBOX does not run" >&2
  exit 1
fi
# a dynamically linked busybox would not run in an image without a libc
if command -v ldd >/dev/null 2>&1 && ldd "$BUSYBOX" 2>&1 | grep -q '=>'; then
  echo "[test-image] $BUSYBOX is dynamically linked; use a static build (busybox-static)" >&2
  exit 1
fi

rootfs=$(mktemp -d)
trap 'rm -rf "$rootfs"' EXIT
mkdir -p "$rootfs"/{bin,sbin,usr/bin,usr/sbin,etc,tmp,root,home,proc,sys,dev,workspace}
chmod 1777 "$rootfs/tmp"
cp "$BUSYBOX" "$rootfs/bin/busybox"
# one symlink per applet, each where busybox would install it
"$BUSYBOX" --list-full | while read -r applet; do
  [ -e "$rootfs/$applet" ] || ln -s /bin/busybox "$rootfs/$applet"
done
cat > "$rootfs/etc/passwd" <<'PASSWD'
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/home:/bin/false
sandbox:x:1000:1000:sandbox:/home:/bin/sh
PASSWD
cat > "$rootfs/etc/group" <<'GROUP'
root:x:0:
nogroup:x:65534:
sandbox:x:1000:
GROUP
echo 'hosts: files dns' > "$rootfs/etc/nsswitch.conf"

tar -C "$rootfs" --numeric-owner -cf - . | docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["/bin/sh"]' \
  --change 'LABEL dev.sandbox.test-image=busybox' \
  - "$IMAGE" >/dev/null
echo "[test-image] built $IMAGE ($("$BUSYBOX" | head -n 1))"

one=$(mktemp -d)
trap 'rm -rf "$rootfs" "$one"' EXIT
cp "$BUSYBOX" "$one/busybox"
tar -C "$one" --numeric-owner -cf - busybox | docker import \
  --change 'LABEL dev.sandbox.test-image=one-program' \
  - "$ONE_PROGRAM" >/dev/null
echo "[test-image] built $ONE_PROGRAM (only /busybox)"

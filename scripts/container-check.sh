#!/usr/bin/env bash
# The container image's check in CI (docs/deployment.md#container-image). Always the static rules
# (scripts/check-dockerfile.ts); then, where a container engine answers and can fetch the pinned
# base images, a real build and run: /healthz answers 200, the process runs as UID 10001, `stop`
# ends it within the grace period with exit 0, and the image is at most 250 MB. Where there is no
# working engine (a docker client without a daemon counts as none), it says so and passes on the
# static check alone: an unreachable engine is a fact about the machine, not about the image.
set -euo pipefail
cd "$(dirname "$0")/.."

MAX_IMAGE_BYTES=250000000 # 250 MB, as `docker images` counts them
GRACE_SECONDS=10          # docker stop's default; the image's SHUTDOWN_TIMEOUT_MS is below it

node --import tsx scripts/check-dockerfile.ts

# The first engine whose daemon (or, for podman, whose runtime) answers.
engine=''
for candidate in docker podman; do
  if command -v "$candidate" >/dev/null 2>&1 && timeout 20 "$candidate" info >/dev/null 2>&1; then engine=$candidate; break; fi
done
if [ -z "$engine" ] && command -v buildah >/dev/null 2>&1 && timeout 20 buildah info >/dev/null 2>&1; then engine=buildah; fi
if [ -z "$engine" ]; then
  present=$(for tool in docker podman buildah; do if command -v "$tool" >/dev/null 2>&1; then printf '%s\n' "$tool"; fi; done | paste -sd, -)
  echo "Container image: STATIC CHECK ONLY (no working container engine${present:+; installed but not answering: $present})"
  exit 0
fi

bases=$(sed -n 's/^FROM[[:space:]]\{1,\}\([^[:space:]]*@sha256:[0-9a-f]\{64\}\).*/\1/p' Dockerfile)
for base in $bases; do
  if ! timeout 300 "$engine" pull "$base" >/dev/null 2>&1; then
    echo "Container image: STATIC CHECK ONLY ($engine answers, but cannot pull $base)"
    exit 0
  fi
done

tag="rz-auth:ci-$$"
name="rz-auth-ci-$$"
cleanup() {
  if [ "$engine" != buildah ]; then "$engine" rm -f "$name" >/dev/null 2>&1 || true; fi
  "$engine" rmi -f "$tag" >/dev/null 2>&1 || true
}
trap cleanup EXIT

version=$(node -p "require('./package.json').version")
if [ "$engine" = buildah ]; then
  buildah bud --layers --build-arg VERSION="$version" -t "$tag" .
  size=$(buildah inspect --type image --format '{{.Size}}' "$tag" 2>/dev/null || echo 0)
else
  "$engine" build --build-arg VERSION="$version" -t "$tag" .
  size=$("$engine" image inspect --format '{{.Size}}' "$tag")
fi
echo "image size: $((size / 1000000)) MB (at most $((MAX_IMAGE_BYTES / 1000000)) MB)"
if [ "$size" -gt "$MAX_IMAGE_BYTES" ]; then echo "FAIL: the image is larger than 250 MB" >&2; exit 1; fi
if [ "$engine" = buildah ]; then
  echo "Container image: BUILT with buildah (size checked); buildah runs no service, so it was not started"
  exit 0
fi

"$engine" run -d --name "$name" -p 127.0.0.1::3000 "$tag" >/dev/null
port=$("$engine" port "$name" 3000/tcp | head -n 1 | sed 's/.*://')
status=''
for _ in $(seq 1 60); do
  status=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/healthz" || true)
  [ "$status" = 200 ] && break
  sleep 0.5
done
if [ "$status" != 200 ]; then
  "$engine" logs "$name" >&2 || true
  echo "FAIL: GET /healthz answered '$status', not 200" >&2; exit 1
fi
echo "GET /healthz: 200"

# The image has no shell and no cat: Node reads the process's own status.
uid_line=$("$engine" exec "$name" /nodejs/bin/node -e "process.stdout.write(require('node:fs').readFileSync('/proc/1/status', 'utf8'))" | grep '^Uid:' || true)
echo "PID 1 $uid_line"
if ! printf '%s\n' "$uid_line" | grep -Eq '^Uid:[[:space:]]+10001[[:space:]]+10001[[:space:]]+10001[[:space:]]+10001$'; then
  echo "FAIL: the service does not run as UID 10001" >&2; exit 1
fi

started=$(date +%s%N)
"$engine" stop -t "$GRACE_SECONDS" "$name" >/dev/null
elapsed_ms=$((($(date +%s%N) - started) / 1000000))
exit_code=$("$engine" inspect --format '{{.State.ExitCode}}' "$name")
echo "stop: exit code $exit_code after $elapsed_ms ms (grace period ${GRACE_SECONDS} s)"
if [ "$exit_code" != 0 ] || [ "$elapsed_ms" -ge $((GRACE_SECONDS * 1000)) ]; then
  "$engine" logs "$name" >&2 || true
  echo "FAIL: the service did not stop cleanly within the grace period" >&2; exit 1
fi

echo "Container image: BUILT AND RUN with $engine"

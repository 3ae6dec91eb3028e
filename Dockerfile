# The rz-auth image: docs/deployment.md#container-image says how to build, run and upgrade it.
#
#   docker build --build-arg VERSION="$(node -p "require('./package.json').version")" -t rz-auth .
#
# Both bases are pinned by digest, so a rebuild gets the same bytes until someone moves the pin on
# purpose: `docker buildx imagetools inspect <image>:<tag>` prints a tag's current digest; move
# both pins together and run scripts/container-check.sh. scripts/check-dockerfile.ts holds this
# file to its rules (pinned bases, numeric non-root user, production dependencies only, …).

# ---- build: the native addons, the TypeScript, then the production node_modules --------------
FROM node:24-bookworm-slim@sha256:6f7b03f7c2c8e2e784dcf9295400527b9b1270fd37b7e9a7285cf83b6951452d AS build

# node-gyp's toolchain: better-sqlite3 12 compiles from source at install, and argon2 compiles
# itself on a platform its package ships no binary for.
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*

WORKDIR /src

# The dependencies first, from the lockfile alone, so a source change does not reinstall them.
# The workspaces' package.json files are part of the lockfile's tree.
COPY package.json package-lock.json ./
COPY packages/token/package.json packages/token/
COPY packages/verify/package.json packages/verify/
COPY packages/cli/package.json packages/cli/
COPY examples/resource-server/package.json examples/resource-server/
# Install scripts run only for the packages package.json's allowScripts allows (read from it, so
# the list has one home and an npm too old for allowScripts obeys it as well); the root's own
# `prepare` build waits for the sources below.
RUN npm ci --ignore-scripts --no-audit --no-fund \
  && npm rebuild --foreground-scripts $(node -p "const a = require('./package.json').allowScripts; Object.keys(a).filter((n) => a[n] === true).join(' ')")

COPY . .
RUN npm run build

# What the runtime stage copies: production dependencies only. Then what a Node 24 process never
# reads: better-sqlite3 12 (Node 20's driver; src/db/database.ts loads better-sqlite3-napi on
# Node 22+), the workspaces (the token and verifier packages and the example service), SQLite's C sources
# and other platforms' prebuilt binaries, type declarations and source maps of dependencies.
RUN npm prune --omit=dev --ignore-scripts --no-audit --no-fund \
  && rm -rf node_modules/better-sqlite3 node_modules/@rz-auth node_modules/rz-auth-resource-server-example \
    node_modules/better-sqlite3-napi/deps node_modules/better-sqlite3-napi/src \
  && target="$(node -p "process.platform + '-' + process.arch")" \
  && find node_modules/better-sqlite3-napi/prebuilds node_modules/argon2/prebuilds -mindepth 1 -maxdepth 1 \
    ! -name "${target}*" -exec rm -rf {} + \
  && find node_modules -type f \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.map' \) -delete \
  && mkdir -p /out/data

# ---- runtime: Node 24 and the service, no shell, no package manager ---------------------------
# Distroless rather than node:24-bookworm-slim: the slim image alone is about 230 MB (npm, yarn,
# apt, a shell), which leaves too little of the 250 MB budget for the service and its dependencies.
FROM gcr.io/distroless/nodejs24-debian12:nonroot@sha256:14d42e2511532589a7c7e01a753667a74fcc96266e137e8125006b87b0c32d0a AS runtime

ARG VERSION=dev
ARG SOURCE_URL=""
LABEL org.opencontainers.image.title="rz-auth" \
  org.opencontainers.image.description="Self-hosted authentication and token service" \
  org.opencontainers.image.version="${VERSION}" \
  org.opencontainers.image.source="${SOURCE_URL}" \
  org.opencontainers.image.licenses="MIT"

WORKDIR /app
# Owned by root and read-only to the service: it can write its database, never its own code.
COPY --from=build /src/package.json ./
COPY --from=build /src/assets ./assets
COPY --from=build /src/dist ./dist
COPY --from=build /src/node_modules ./node_modules
# The SQLite database lives on the volume; a new volume takes this directory's owner.
COPY --from=build --chown=10001:10001 /out/data /data

# Listens on every interface of the container (publish the port to choose who reaches it). The
# shutdown deadline stays under `docker stop`'s default 10 s grace period, so in-flight requests
# finish and event streams end cleanly before the engine would kill the process.
ENV HOST=0.0.0.0 \
  PORT=3000 \
  DATABASE_URL=sqlite:/data/rz-auth.db \
  SHUTDOWN_TIMEOUT_MS=8000

VOLUME /data
# 3000: the API and the Developers page. 9464: GET /metrics when METRICS_ADDR=0.0.0.0:9464 (with
# METRICS_TOKEN, which a non-loopback metrics address requires).
EXPOSE 3000 9464

USER 10001:10001

# The image has no shell and no curl: Node itself asks /healthz.
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
  CMD ["/nodejs/bin/node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

# Node runs as PID 1 and handles SIGTERM itself (src/server.ts: stop accepting, finish in-flight
# requests, end event streams, flush the log, exit).
STOPSIGNAL SIGTERM
ENTRYPOINT ["/nodejs/bin/node", "dist/cli.js"]
CMD ["serve"]

# syntax=docker/dockerfile:1
#
# Image of the agent and retrieval service. One image for every role:
#   node dist/apps/main.js                 api + projection worker in one process (default)
#   node dist/apps/main.js --role=api      HTTP API only
#   node dist/apps/main.js --role=worker   projection runtime only
# With no engine URLs set it runs the embedded default (SQLite under DATA_DIR).
# See docs/deployment.md.

ARG NODE_IMAGE=node:20-bookworm-slim

# ---- build: compile TypeScript; better-sqlite3 may build from source, hnswlib-node always does (node-gyp) ----
FROM ${NODE_IMAGE} AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# Dependencies first, so source changes do not invalidate the npm ci layer.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
# The build ends by caching the default encoder's word table under node_modules/.cache (docs/encoders.md): the
# runtime user cannot write node_modules, and would otherwise parse its 307 MB package at every start.
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund

# ---- runtime: same base image as the build, so the native addon's ABI and glibc match ----
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    DATA_DIR=/data \
    HOST=0.0.0.0 \
    PORT=8080
WORKDIR /app
# Code and dependencies stay owned by root (read-only for the service user).
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The image's /data is owned by `node`, so a new named volume mounted there inherits that owner.
RUN mkdir -p /data && chown node:node /data && chmod 0700 /data
USER node
VOLUME ["/data"]
EXPOSE 8080
# Liveness only (GET /health). Uses node's built-in fetch: no curl in the image.
# A container started with --role=worker serves no HTTP unless the worker exposes /health:
# disable or override this check for such containers (see docker-compose.yml).
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/health', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Node as PID 1 gets SIGTERM only if the app handles it; compose sets `init: true` (docker run --init).
CMD ["node", "dist/apps/main.js"]

# syntax=docker/dockerfile:1
# One image for the worker (the default command) and the operator console with the pipeline entry:
# temporal-compose.yml picks the command and the health check per service. The sandbox (a stand-in of
# the service) is not in it: it has its own image, sandbox/Dockerfile.
# `npm run image:check` runs these stages on a machine without Docker and then the CMD, as a non-root
# user (scripts/image-check/image-check.ts): it refuses instructions it cannot run, so keep to FROM,
# WORKDIR, COPY, RUN (shell form), ENV, USER, HEALTHCHECK and CMD (exec form, `node dist/...`).

# ---- build: TypeScript to dist/, console page assets, the prebuilt workflow bundle ---------------
FROM node:24-slim AS build
WORKDIR /app
# package.json's allowScripts decides which install scripts run (none; allowScriptsReasons says why),
# here as in .ci/run and a developer's npm ci. --prefer-offline: what the cache mount holds is taken
# without asking the registry again (the lock pins every version and integrity), so a second build
# makes no request for it.
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --prefer-offline --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json .nvmrc ./
COPY scripts/build-workflow-bundle.ts scripts/copy-runtime-assets.ts scripts/with-pinned-node.sh ./scripts/
COPY src ./src
RUN npm run build

# ---- runtime: production dependencies and dist/ only (no TypeScript, no tsx) ----------------------
FROM node:24-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
# The npm cache stays in the build cache, not in the image. The SDK's native core ships prebuilt for
# five platforms (137 MB); only this machine's stays (x86_64 or aarch64 Linux, 29 MB).
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --prefer-offline --no-audit --no-fund \
 && find node_modules/@temporalio/core-bridge/releases -mindepth 1 -maxdepth 1 ! -name "$(uname -m)-unknown-linux-gnu" -exec rm -rf {} +
COPY --from=build /app/dist ./dist

# Every worker of a deployment runs the same prebuilt workflow code, without webpack at start.
ENV WORKER_WORKFLOW_BUNDLE=/app/dist/workflow-bundle.js
# GET /healthz: 200 while the worker runs, 503 while SIGTERM drains it (src/worker/health.ts).
ENV WORKER_HEALTH_PORT=8081

# node's own unprivileged user, by number (uid and gid 1000 in the node images) so that a runtime can
# tell it is not root without reading the image's /etc/passwd (Kubernetes' runAsNonRoot); the app writes nothing under /app.
USER 1000:1000

# The worker's probe; the console service replaces it with its own (temporal-compose.yml).
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "dist/src/worker/health-check.js", "http://127.0.0.1:8081/healthz"]

# node itself is the main process (no npm, no shell), so `docker stop` (SIGTERM) reaches the code
# that drains the worker or closes the console.
CMD ["node", "dist/src/worker.js"]

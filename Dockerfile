# One image for the worker and the sandbox (temporal-compose.yml picks the command per service).
# TypeScript runs through tsx, as in development; the workflow bundle is prebuilt so the worker
# starts without webpack.
FROM node:20-slim

WORKDIR /app

# devDependencies are installed on purpose: tsx runs the TypeScript sources.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund \
 && npm cache clean --force

COPY tsconfig.json ./
COPY src ./src
COPY scripts/build-workflow-bundle.ts ./scripts/build-workflow-bundle.ts
RUN node --import tsx scripts/build-workflow-bundle.ts dist/workflow-bundle.js

ENV WORKER_WORKFLOW_BUNDLE=/app/dist/workflow-bundle.js
USER node

# node itself (not npx → tsx → node) is the main process, so `docker stop` (SIGTERM) reaches the
# code that drains the worker or closes the sandbox.
CMD ["node", "--import", "tsx", "src/worker.ts"]

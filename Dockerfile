# syntax=docker/dockerfile:1
#
# One image for both entry points:
#   API (default):  node dist/src/server.js
#   worker:         node dist/workers/index.js
# Each applies pending migrations itself (under Prisma Migrate's advisory lock) before it starts.
# docker-compose.yml runs PostgreSQL, Redis, the API and the worker from it.

# Node 26, the Active LTS line since 2026-10-28 (24 is in maintenance; Node 20 reached its end of
# life in April 2026). Node 26's images are Debian 13 (trixie). The code runs on any version
# package.json's engines allows (Prisma 7's: ^20.19 || ^22.12 || >=24).
ARG NODE_IMAGE=node:26-trixie-slim

# ---------------------------------------------------------------------------------------------
# build: all dependencies, Prisma client generation, TypeScript compilation, then prune to prod
FROM ${NODE_IMAGE} AS build
WORKDIR /app
ENV CHECKPOINT_DISABLE=1 \
    npm_config_update_notifier=false \
    npm_config_fund=false \
    npm_config_audit=false

COPY package.json package-lock.json ./
# Every dependency install script is denied in package.json's allowScripts, and nothing depends on
# them. The npm that ships with this image predates allowScripts, so deny them here explicitly.
RUN npm ci --ignore-scripts

COPY tsconfig.json tsconfig.build.json prisma.config.ts ./
COPY scripts ./scripts
COPY prisma ./prisma
COPY src ./src
COPY workers ./workers
COPY openapi ./openapi
# `npm run build` = scripts/prisma-generate.js (client into src/generated) + tsc -p tsconfig.build.json
# (everything, the generated client included, into dist/) + openapi/ parsed into
# node_modules/.cache/sandbank/ (prune leaves dot-folders alone), so a start skips parsing the
# YAML. Then drop what only building needs.
# --omit=optional too: the prisma CLI and typescript are optional peers of @prisma/client, which
# --omit=dev alone keeps (~130 MB); the only optional production packages are msgpackr's native
# speed-up (it falls back to JavaScript) and pg-cloudflare (Cloudflare Workers only).
RUN npm run build \
 && npm prune --omit=dev --omit=optional --ignore-scripts

# ---------------------------------------------------------------------------------------------
# runtime: compiled JavaScript, production dependencies, and the files read at run time
FROM ${NODE_IMAGE} AS runtime
# HOST: Sandbank listens on 127.0.0.1 unless told otherwise; in a container that would leave the
# published port unreachable, so the image listens on every interface of its own network.
# Production: the process never generates a key for secrets at rest; it starts only with
# SECRETS_ENCRYPTION_KEY or an existing key file in DATA_DIR (see docs/configuration.md, Secrets at rest).
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    DATA_DIR=/app/data
WORKDIR /app

# The project root is the directory holding package.json: the migration runner reads
# <root>/prisma/migrations and the kernel loads the OpenAPI document from <root>/openapi.
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# `npm run keys`, `npm run migrate`, `npm run reset` and `npm run seed` run scripts/build.js first; with no src/
# here it has nothing to build, and they run the compiled command.
COPY scripts/build.js ./scripts/build.js
COPY prisma/migrations ./prisma/migrations
COPY openapi ./openapi

# Files stay root-owned and read-only to the process; it writes nothing but its logs to stdout
# and the key file in DATA_DIR, a directory of its own (mode 0700). A named volume mounted there
# starts with this owner and mode, as docker-compose.yml's `sandbank-data` does.
RUN mkdir -p /app/data && chown node:node /app/data && chmod 700 /app/data
USER node
EXPOSE 12111

# No curl in the slim image: ask /healthz with node. The worker answers no /healthz: compose gives
# it a check of its own (its metrics on WORKER_METRICS_PORT, 12112).
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "require('node:http').get({ host: '127.0.0.1', port: process.env.PORT || 12111, path: '/healthz', timeout: 4000 }, (res) => process.exit(res.statusCode === 200 ? 0 : 1)).on('timeout', () => process.exit(1)).on('error', () => process.exit(1))"]

# node is PID 1 and handles SIGTERM itself (graceful shutdown in src/runtime.ts).
CMD ["node", "dist/src/server.js"]

# syntax=docker/dockerfile:1
#
# One image for both entry points:
#   API (default):  node dist/src/server.js
#   worker:         node dist/workers/index.js
# Each applies pending migrations itself (under Prisma Migrate's advisory lock) before it starts.
# docker-compose.yml runs PostgreSQL, Redis, the API and the worker from it.

# Prisma 7 needs Node >= 20.19.
ARG NODE_IMAGE=node:20.20-bookworm-slim

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
# `npm run build` = scripts/prisma-generate.js (client into src/generated) + tsc -p tsconfig.build.json
# (everything, the generated client included, into dist/). Then drop what only building needs.
# --omit=optional too: the prisma CLI and typescript are optional peers of @prisma/client, which
# --omit=dev alone keeps (~130 MB); the only optional production packages are msgpackr's native
# speed-up (it falls back to JavaScript) and pg-cloudflare (Cloudflare Workers only).
RUN npm run build \
 && npm prune --omit=dev --omit=optional --ignore-scripts

# ---------------------------------------------------------------------------------------------
# runtime: compiled JavaScript, production dependencies, and the files read at run time
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app

# The project root is the directory holding package.json: the migration runner reads
# <root>/prisma/migrations and the kernel loads the OpenAPI document from <root>/openapi.
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY prisma/migrations ./prisma/migrations
COPY openapi ./openapi

# Files stay root-owned and read-only to the process; it writes nothing but its logs to stdout.
USER node
EXPOSE 12111

# No curl in the slim image: ask /healthz with node. (The worker serves no HTTP; compose turns
# this check off for it.)
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "require('node:http').get({ host: '127.0.0.1', port: process.env.PORT || 12111, path: '/healthz', timeout: 4000 }, (res) => process.exit(res.statusCode === 200 ? 0 : 1)).on('timeout', () => process.exit(1)).on('error', () => process.exit(1))"]

# node is PID 1 and handles SIGTERM itself (graceful shutdown in src/runtime.ts).
CMD ["node", "dist/src/server.js"]

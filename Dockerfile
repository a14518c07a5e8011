# Flows as a container image: built in one stage, run from a small one as a user without privileges.
#   docker build -t flows .
#   docker run -p 3000:3000 -v flows-data:/app/data flows
# BASE_IMAGE is the usual public Node 22 image; a machine without a registry builds one of its own and
# passes it (deploy/base-image.sh, as CI does).
ARG BASE_IMAGE=node:22-bookworm-slim

FROM ${BASE_IMAGE} AS build
# better-sqlite3 compiles its native module with node-gyp.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# What installing needs first (its scripts generate the database clients and build the CLI and SDK), so
# that a change of the server's sources alone keeps the dependencies' layer.
COPY package.json package-lock.json tsconfig.json ./
COPY scripts ./scripts
COPY prisma ./prisma
COPY openapi ./openapi
COPY generated ./generated
COPY clients ./clients
RUN npm ci --no-audit --no-fund
COPY . .
RUN node node_modules/typescript/bin/tsc -p tsconfig.build.json \
 && touch dist/.build-stamp \
 && node -e 'require("./dist/src/http/contract").loadContract()' \
 && npm prune --omit=dev --no-audit --no-fund \
 && rm -rf test .ci clients/*/src ~/.npm \
 && sh deploy/prune-modules.sh

FROM ${BASE_IMAGE}
# bubblewrap, socat and busybox: the local target's sandbox and its egress bridge; tini: an init that passes
# SIGTERM on and reaps what agents leave; git: the repositories runs clone and push.
RUN apt-get update \
 && apt-get install -y --no-install-recommends bubblewrap socat busybox-static tini ca-certificates git \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --uid 10001 --create-home --shell /usr/sbin/nologin flows
WORKDIR /app
COPY --from=build --chown=root:root /app /app
RUN mkdir -p /app/data && chown flows:flows /app/data
# Small at rest: freed memory goes back to the system, and the young generation stays at 2 × 8 MB (see
# docs/performance.md); `npm start` runs the server the same way.
ENV NODE_ENV=production PORT=3000 HOST=0.0.0.0 LOG_FORMAT=json MALLOC_TRIM_THRESHOLD_=131072
USER flows
VOLUME ["/app/data"]
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/readyz`).then((res) => process.exit(res.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "--max-semi-space-size=8", "dist/src/main.js"]

# syntax=docker/dockerfile:1
# dlsync: mirror a Download Service account to local disk. See docker/compose.yaml and README.md.
#
#   docker build -t dlsync .
#   docker run -d --name dlsync -e PUID=1000 -e PGID=1000 -e DLSYNC_MIRROR_ROOT=/data \
#     -v ./config:/config -v /srv/media/dlsync:/data dlsync
#
# One stage installs the production dependencies, another bundles the TypeScript sources
# into dist/ (scripts/build.ts: half the memory of running the sources). The final
# image is plain Alpine with the Node binary, the bundle and the production dependencies
# (no npm, yarn or corepack, no sources); its size: docker/README.md.

ARG NODE_VERSION=24.21.0
ARG ALPINE_VERSION=3.22

# --- dependencies: production only, the `node` devDependency and all dev tools left out.
FROM node:${NODE_VERSION}-alpine${ALPINE_VERSION} AS deps
WORKDIR /opt/dlsync
COPY package.json package-lock.json ./
# --ignore-scripts: nothing runs at install; better-sqlite3 ships its prebuilt binaries
# (linuxmusl-x64/arm64 included). Then drop what is never loaded at run time: type
# declarations, source maps, READMEs and changelogs (licenses stay), effect's TypeScript
# sources (it runs from dist/), better-sqlite3's C sources and other platforms' binaries.
# The last line proves the native module still loads.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
    && find node_modules \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.map' \
         -o -iname 'readme*.md' -o -iname 'changelog*.md' \) -type f -delete \
    && rm -rf node_modules/effect/src node_modules/better-sqlite3/deps node_modules/better-sqlite3/src \
    && find node_modules/better-sqlite3/prebuilds -type f ! -name "linuxmusl-$(node -p process.arch).node" -delete \
    && node -e "require('better-sqlite3')(':memory:').prepare('select 1').get()"

# --- bundle: the dev dependencies (esbuild, preact) only build dist/ (dlsync.mjs and its chunks, the web
# page in dist/web); none of them ships.
FROM node:${NODE_VERSION}-alpine${ALPINE_VERSION} AS bundle
WORKDIR /opt/dlsync
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY src ./src
COPY scripts ./scripts
COPY web ./web
RUN node scripts/build.ts

# --- runtime
FROM node:${NODE_VERSION}-alpine${ALPINE_VERSION} AS node

FROM alpine:${ALPINE_VERSION}
# libstdc++: Node's runtime library; tini: PID 1 that forwards signals and reaps children;
# su-exec: drops root to the dlsync user; shadow: usermod/groupmod for PUID/PGID;
# tzdata: TZ= for the bandwidth schedule's local times.
# hadolint ignore=DL3018
RUN apk add --no-cache libstdc++ tini su-exec shadow tzdata \
    && addgroup -g 1000 dlsync \
    && adduser -D -H -u 1000 -G dlsync -h /config -s /sbin/nologin -g "dlsync mirror daemon" dlsync
COPY --from=node /usr/local/bin/node /usr/local/bin/node

LABEL org.opencontainers.image.title="dlsync" \
      org.opencontainers.image.description="Keep a Download Service account mirrored on local disk" \
      org.opencontainers.image.licenses="MIT"

WORKDIR /opt/dlsync
COPY --from=deps /opt/dlsync/node_modules ./node_modules
COPY package.json ./
COPY bin ./bin
COPY --from=bundle /opt/dlsync/dist ./dist
COPY --chmod=0755 docker/entrypoint.sh /usr/local/bin/dlsync-entrypoint
COPY docker/healthcheck.mjs ./docker/healthcheck.mjs

# Where the configuration file is and where the state goes unless mirror.state_dir says
# otherwise (STATE_DIRECTORY is systemd's variable for it). No DLSYNC_<SECTION>_<KEY>: a
# setting given here would replace the one the user writes in config.toml. mirror.root is
# the user's to set (config.toml, or DLSYNC_MIRROR_ROOT in their compose file).
ENV NODE_ENV=production \
    DLSYNC_CONFIG=/config/config.toml \
    STATE_DIRECTORY=/config/state

VOLUME ["/config", "/data"]
# The health and metrics server listens on 127.0.0.1:7660 inside the container; publish it
# only after setting DLSYNC_SERVER_LISTEN=0.0.0.0:7660.
EXPOSE 7660

HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 \
    CMD ["node", "/opt/dlsync/docker/healthcheck.mjs"]

# tini runs the entrypoint, which execs dlsync: SIGTERM reaches dlsync, which stops within
# 10 s (give `docker stop -t 20` / `stop_grace_period: 20s` a margin).
STOPSIGNAL SIGTERM
ENTRYPOINT ["/sbin/tini", "--", "/usr/local/bin/dlsync-entrypoint"]
CMD ["run"]

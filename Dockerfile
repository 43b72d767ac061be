# One image for both processes: the API (the default) and the worker (docker-compose.yml sets
# the command). It runs compiled JavaScript (dist/app, built by `npm run build`) on Node 24 LTS,
# in the node process itself: no npm, tsx or shell in between to swallow `docker stop`'s SIGTERM
# (run with an init that forwards signals and reaps git's children, e.g. `docker run --init` or
# compose's `init: true`).

# --- build: every dependency, the sources, then the compiled output in dist/ ---
FROM node:24-bookworm-slim AS build
ENV NPM_CONFIG_UPDATE_NOTIFIER=false NPM_CONFIG_FUND=false
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci
COPY . .
# dist/app: the service compiled module by module; the workflow code bundled once (a worker
# then starts without running the bundler); the CLI as a dependency-free package, served at
# /cli/archaudit-cli.tgz for CI jobs (README, the command-line client); the console's assets in
# dist/console, served at /app/ (`npm ci` above ran before the sources were copied, so its
# `prepare` step could not build them).
RUN npm run --silent build \
  && npm run --silent bundle:workflows -- /app/dist/workflow-bundle.js \
  && npm run --silent build:cli \
  && npm run --silent build:console

# --- run: production dependencies and dist/ only (no TypeScript sources, no dev tools) ---
FROM node:24-bookworm-slim

# The worker fetches tenants' repositories with the git CLI (https and ssh remotes).
RUN apt-get update \
  && apt-get install -y --no-install-recommends git openssh-client ca-certificates \
  && rm -rf /var/lib/apt/lists/*

# NPM_CONFIG_SCRIPT_SHELL: for `npm run ...` inside the container (the default commands do not
# use npm). With /bin/sh (dash) a shell stays between npm and the script and dies on SIGTERM
# without passing it on; bash execs a one-command script, so npm's forwarded signal arrives.
ENV NODE_ENV=production \
  NPM_CONFIG_UPDATE_NOTIFIER=false \
  NPM_CONFIG_FUND=false \
  NPM_CONFIG_SCRIPT_SHELL=/bin/bash \
  DATA_DIR=/data

WORKDIR /app

# Dependencies first, so that a source change does not reinstall them.
COPY package.json package-lock.json .npmrc ./
RUN npm ci --omit=dev && npm cache clean --force

# `npm run admin|migrate|openapi|api|worker` go through scripts/run.cjs, which finds no sources
# here and runs dist/app as built.
COPY scripts/run.cjs ./scripts/run.cjs
COPY --from=build /app/dist ./dist
ENV WORKFLOW_BUNDLE=/app/dist/workflow-bundle.js

# `archaudit` on the PATH (`docker compose run --rm api archaudit ...`).
RUN npm install -g --offline /app/dist/archaudit-cli.tgz

# DATA_DIR (blobs) is shared by the API and the worker through a volume mounted here; a new
# named volume takes this folder's owner, so the unprivileged user can write to it.
RUN mkdir -p /data && chown node:node /data
USER node

EXPOSE 8080
CMD ["node", "dist/app/api/main.js"]

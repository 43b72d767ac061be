# One image for both processes: the API (the default) and the worker (docker-compose.yml sets
# the command). TypeScript runs through tsx's loader, as in development, in the node process
# itself: no npm or shell in between to swallow `docker stop`'s SIGTERM (run with an init that
# forwards signals and reaps git's children, e.g. `docker run --init` or compose's `init: true`).
FROM node:20-bookworm-slim

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

# Dependencies first, so that a source change does not reinstall them. tsx is a runtime
# dependency, so development-only packages (test runner, linters, typescript) are left out.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force

COPY . .

# The workflow code, bundled once here: a worker then starts without running the bundler.
RUN npm run --silent bundle:workflows -- /app/dist/workflow-bundle.js
ENV WORKFLOW_BUNDLE=/app/dist/workflow-bundle.js

# The CLI as a dependency-free package: `archaudit` in the image, and the tarball the API serves
# at /cli/archaudit-cli.tgz for CI jobs (README, the command-line client).
RUN npm run --silent build:cli && npm install -g --offline /app/dist/archaudit-cli.tgz

# DATA_DIR (blobs) is shared by the API and the worker through a volume mounted here; a new
# named volume takes this folder's owner, so the unprivileged user can write to it.
RUN mkdir -p /data && chown node:node /data
USER node

EXPOSE 8080
CMD ["node", "--import", "tsx", "api/main.ts"]

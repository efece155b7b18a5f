# A Connect worker (or, with `broker` as the command, the broker alone) built from this
# repository. The first stage compiles the TypeScript sources into dist/ (npm's prepare
# step, scripts/build.mjs); the image runs that build, as `npx connect` does while the
# build is fresh, and leaves out dev dependencies (test servers, type checker).
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
COPY connectors ./connectors
COPY ui ./ui
RUN npm ci --no-audit --no-fund

FROM node:20-bookworm-slim

WORKDIR /app
ENV NODE_ENV=production

COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
# Without TypeScript the prepare step only says that there is nothing to build.
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

COPY bin ./bin
COPY src ./src
COPY connectors ./connectors
COPY config ./config
COPY ui ./ui
# Its stamp dates from the build stage, after the sources' own dates, so it counts as fresh.
COPY --from=build /app/dist ./dist
COPY --from=build /app/ui/dist ./ui/dist

# Partition logs of the embedded broker, standalone offsets, local Parquet output.
VOLUME /app/data

# REST API (listeners) and the embedded broker's Kafka listener (broker.port).
EXPOSE 8083 9092

# Containers listen on every interface; the quick-start file keeps loopback for laptops.
ENV CONNECT_LISTENERS=http://0.0.0.0:8083

ENTRYPOINT ["node", "bin/connect.js"]
CMD ["worker", "config/worker.properties"]

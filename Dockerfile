# A Connect worker (or, with `broker` as the command, the broker alone) built from this
# repository. The TypeScript sources run through tsx as `npx connect` does, so the image
# needs no build step; dev dependencies (test servers, type checker) are left out.
FROM node:20-bookworm-slim

WORKDIR /app
ENV NODE_ENV=production

COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

COPY bin ./bin
COPY src ./src
COPY connectors ./connectors
COPY config ./config

# Partition logs of the embedded broker, standalone offsets, local Parquet output.
VOLUME /app/data

# REST API (listeners) and the embedded broker's Kafka listener (broker.port).
EXPOSE 8083 9092

# Containers listen on every interface; the quick-start file keeps loopback for laptops.
ENV CONNECT_LISTENERS=http://0.0.0.0:8083

ENTRYPOINT ["node", "bin/connect.js"]
CMD ["worker", "config/worker.properties"]

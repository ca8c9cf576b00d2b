# syntax=docker/dockerfile:1
# crm-sync worker image. test/image/runtimeStage.test.ts replays this file's COPY and RUN steps
# in a temp dir (no Docker daemon in CI), measures the runtime stage and runs the worker from it.

# Build stage: install everything, generate the Prisma client, compile TypeScript, then cut
# node_modules down to what the compiled worker loads.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY prisma ./prisma
COPY scripts ./scripts
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# `npm run build` also makes dist/pglite-template (the embedded database a first start loads
# instead of running initdb). The sandboxes (packages/sandboxes, a development workspace) are not
# copied: npm ci leaves a dangling link to them, which the prune below removes with the other
# devDependencies.
RUN npm run build
# Production dependencies only. --omit=optional --omit=peer: @prisma/client declares prisma and
# typescript as optional peers, which keeps both (and Prisma Studio) through a plain
# `--omit=dev`. Then files nothing loads at run time: source maps, type declarations, docs, and
# the Prisma query compilers of the databases crm-sync does not use (it runs on PostgreSQL only).
RUN npm prune --omit=dev --omit=optional --omit=peer --no-audit --no-fund \
 && find node_modules -type f \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.md' \) -delete \
 && find node_modules/@prisma/client/runtime -type f -name 'query_compiler_*' ! -name '*postgresql*' -delete

# Runtime stage: production dependencies, compiled code, migrations and the shipped mapping
# files, run as the image's non-root `node` user.
FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production \
    CONFIG_DIR=/app/config \
    DATA_DIR=/data \
    PORT=8080
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
COPY prisma ./prisma
COPY config ./config
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"
ENTRYPOINT ["node", "bin/crm-sync.js"]
CMD ["start"]

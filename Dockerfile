FROM node:20-bookworm
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY bin ./bin
COPY src ./src
COPY tsconfig.json ./
ENV NODE_ENV=production
# The service runs as the image's unprivileged `node` user; DATA_DIR is the one place it writes (a volume mounted there starts with this owner).
RUN mkdir -p /data && chown node:node /data
ENV DATA_DIR=/data
USER node
EXPOSE 8080
# The service's V8 flags given here keep it one process (without them bin/credit-service.js starts it again as a child with them; a test keeps this list in step with src/shared/nodeFlags.ts).
CMD ["node", "--max-semi-space-size=32", "bin/credit-service.js", "serve"]

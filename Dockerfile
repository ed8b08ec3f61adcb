FROM node:20-bookworm
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY bin ./bin
COPY src ./src
COPY tsconfig.json ./
ENV NODE_ENV=production
EXPOSE 8080
CMD ["node", "bin/credit-service.js", "serve"]

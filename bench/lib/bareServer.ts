// A bare fastify server answering one route with a fixed JSON body through a
// given response schema: the baseline of the HTTP read benchmarks.
import fs from 'node:fs'
import Fastify from 'fastify'

const configFile = process.argv[2]
if (configFile === undefined) throw new Error('usage: bareServer.ts <config.json>')
const config = JSON.parse(fs.readFileSync(configFile, 'utf8')) as { path: string; body: unknown; schema: object }

const app = Fastify({ logger: false })
app.get(config.path, { schema: { response: { 200: config.schema } } }, async () => config.body)
const address = await app.listen({ port: 0, host: '127.0.0.1' })
process.stdout.write(`listening on ${address}\n`)
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)))

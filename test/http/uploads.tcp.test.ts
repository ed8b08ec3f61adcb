import http from 'node:http'
import t from 'tap'
import { Agent, fetch } from 'undici'
import { createTestApp } from '../helpers/app.js'
import { pdfBytes } from '../helpers/files.js'

interface Answer { status: number; headers: http.IncomingHttpHeaders; body: Buffer }

/**
 * The test's own keep-alive clients (as the default ones are), closed at its end, before the app: a connection the
 * server still counts as busy when it starts closing is not closed as idle, and the close then waited for the
 * client to drop it, which fetch does after the server's keep-alive timeout (72 s).
 */
const agent = new http.Agent({ keepAlive: true })
const dispatcher = new Agent()

/** Sends a body in chunks without Content-Length (chunked transfer), as a streaming client does. */
const send = (url: URL, method: string, headers: Record<string, string>, chunks: Buffer[]): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const request = http.request(url, { method, headers, agent }, (response) => {
      const parts: Buffer[] = []
      response.on('data', (part: Buffer) => parts.push(part))
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(parts) }))
    })
    request.on('error', reject)
    const writeNext = (index: number): void => {
      if (index >= chunks.length) {
        request.end()
        return
      }
      const chunk = chunks[index]
      if (chunk === undefined) return
      if (request.write(chunk)) writeNext(index + 1)
      else request.once('drain', () => writeNext(index + 1))
    }
    writeNext(0)
  })

t.test('over TCP: a streamed upload over the limit answers 413; one within it round-trips byte for byte', async (t) => {
  const svc = await createTestApp(t, { config: { uploadMaxBytes: 64 * 1024 } })
  await svc.app.listen({ port: 0, host: '127.0.0.1' })
  const address = svc.app.server.address()
  if (address === null || typeof address === 'string') throw new Error('not listening on TCP')
  const { port } = address
  const headers = { 'authorization': `Bearer ${svc.adminToken}`, 'config-organization-id': svc.organizationId, 'organization-id': svc.organizationId }
  const created = await svc.call({
    method: 'POST', url: '/v1/profiles', token: svc.adminToken, headers: { 'config-organization-id': svc.organizationId, 'organization-id': svc.organizationId },
    payload: { type: 'natural', natural: { firstName: 'Ana', lastName: 'Gómez', documentType: 'CC', documentNumber: '1020304050' } },
  })
  const profileId: string = created.json().data.ID
  const url = new URL(`http://127.0.0.1:${port}/v1/profiles/${profileId}/files/work-certificate`)

  const huge = [pdfBytes, ...Array.from({ length: 64 }, () => Buffer.alloc(16 * 1024, 0x20))]
  const refused = await send(url, 'PUT', { ...headers, 'content-type': 'application/pdf', 'transfer-encoding': 'chunked' }, huge)
  t.equal(refused.status, 413)
  t.equal(JSON.parse(refused.body.toString()).data.code, 'PAYLOAD_TOO_LARGE')

  const file = Buffer.concat([pdfBytes, Buffer.alloc(20 * 1024, 0x41)])
  const stored = await send(url, 'PUT', { ...headers, 'content-type': 'application/pdf', 'transfer-encoding': 'chunked' }, [file.subarray(0, 5000), file.subarray(5000)])
  t.equal(stored.status, 201)
  const fileId: string = JSON.parse(stored.body.toString()).data.file.fileId
  const fetched = await fetch(`http://127.0.0.1:${port}/v1/debtor/${profileId}/profile/work-certificate/${fileId}`, { headers: { authorization: headers.authorization }, dispatcher })
  t.equal(fetched.status, 200)
  t.equal(fetched.headers.get('content-length'), String(file.length))
  t.ok(Buffer.from(await fetched.arrayBuffer()).equals(file), 'the same bytes come back')
  agent.destroy()
  await dispatcher.close()
})

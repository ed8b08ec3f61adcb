import { Readable } from 'node:stream'
import { createHash } from 'node:crypto'
import type { Test } from 'tap'
import type { FileStore } from '../../src/files/fileStore.js'
import { newId } from '../../src/shared/ids.js'

const read = async (stream: Readable) => {
  const chunks: Buffer[] = []
  for await (const chunk of stream) chunks.push(Buffer.from(chunk))
  return Buffer.concat(chunks)
}

export const fileStoreContract = (t: Test, open: () => Promise<FileStore>) => {
  const meta = { contentType: 'application/pdf', filename: 'certificate.pdf', organizationId: 'org-1' }

  t.test('stores bytes from a buffer and gives them back exactly, with size and hash', async (t) => {
    const files = await open()
    const id = newId()
    const content = Buffer.from([0, 1, 2, 255, 254, 10, 13])
    const stored = await files.put(id, content, meta)
    t.equal(stored.size, content.length)
    t.equal(stored.sha256, createHash('sha256').update(content).digest('hex'))
    t.equal(stored.contentType, 'application/pdf')
    t.equal(stored.filename, 'certificate.pdf')
    const opened = await files.open(id)
    t.ok(opened)
    t.same(await read(opened?.stream ?? Readable.from([])), content)
  })

  t.test('stores a stream larger than one chunk', async (t) => {
    const files = await open()
    const id = newId()
    const part = Buffer.alloc(300_000, 7)
    const stored = await files.put(id, Readable.from([part, part, part]), meta)
    t.equal(stored.size, 900_000)
    const opened = await files.open(id)
    t.equal((await read(opened?.stream ?? Readable.from([]))).length, 900_000)
  })

  t.test('a write cut off mid-stream stores nothing, and removing leftovers never touches a stored file', async (t) => {
    const files = await open()
    const kept = newId()
    await files.put(kept, Buffer.from('kept'), meta)
    const cut = newId()
    const failing = Readable.from((function* () {
      yield Buffer.alloc(300_000, 1)
      throw new Error('the writer died')
    })())
    await t.rejects(files.put(cut, failing, meta))
    const removed = await files.removeLeftovers(0, new Date(Date.now() + 2_000))
    t.ok(removed >= 0)
    t.equal(await files.stat(cut), null, 'the cut-off file was never stored')
    t.same(await read((await files.open(kept))?.stream ?? Readable.from([])), Buffer.from('kept'), 'the stored one is intact')
  })

  t.test('answers null for an unknown id and deletes', async (t) => {
    const files = await open()
    t.equal(await files.open(newId()), null)
    t.equal(await files.stat(newId()), null)
    const id = newId()
    await files.put(id, Buffer.from('x'), meta)
    t.equal(await files.delete(id), true)
    t.equal(await files.stat(id), null)
    t.equal(await files.delete(id), false)
  })

  t.test('a failed upload leaves nothing behind', async (t) => {
    const files = await open()
    const id = newId()
    const failing = new Readable({
      read() {
        this.destroy(new Error('client went away'))
      },
    })
    await t.rejects(files.put(id, failing, meta))
    t.equal(await files.stat(id), null)
  })
}

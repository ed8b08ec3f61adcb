import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { FilesystemFileStore, shardOf } from '../../src/files/filesystem.js'
import { newId } from '../../src/shared/ids.js'
import { tempDir } from '../helpers/config.js'

const meta = { contentType: 'text/plain', filename: 'a.txt', organizationId: 'org-1' }

t.test('files with time-ordered ids made in a row spread over many directories', async (t) => {
  const root = tempDir()
  const files = new FilesystemFileStore(root)
  const ids = Array.from({ length: 200 }, () => newId())
  for (const id of ids) await files.put(id, Buffer.from(id), meta)
  const directories = fs.readdirSync(root).filter((name) => fs.statSync(path.join(root, name)).isDirectory())
  t.ok(directories.length > 100, `${directories.length} directories for 200 files`)
  t.same(new Set(ids.map(shardOf)).size, directories.length, 'each directory is a shard of some id')
  const opened = await files.open(ids[17] ?? '')
  t.ok(opened, 'a file is found again')
})

t.test('a file with an id made before ids were time-ordered stays where older installations stored it', async (t) => {
  const root = tempDir()
  const id = '3b241101-e2bb-4255-8caf-4136c566a962'
  t.equal(shardOf(id), '3b')
  const files = new FilesystemFileStore(root)
  await files.put(id, Buffer.from('older'), meta)
  t.ok(fs.existsSync(path.join(root, '3b', id)), 'content under its first two characters')
  t.equal((await files.stat(id))?.size, 5)
})

t.test('temp files a killed writer left are removed once idle; one still being written and stored files stay', async (t) => {
  const root = tempDir()
  const files = new FilesystemFileStore(root)
  const stored = newId()
  await files.put(stored, Buffer.from('whole'), meta)
  const dir = path.join(root, shardOf(stored))
  const orphan = path.join(dir, `${newId()}.0b1c.tmp`)
  const orphanMeta = path.join(dir, `${newId()}.json.0b1d.tmp`)
  const writing = path.join(dir, `${newId()}.0b1e.tmp`)
  for (const file of [orphan, orphanMeta, writing]) fs.writeFileSync(file, 'partial')
  const now = Date.now()
  const anHourAgo = new Date(now - 3_600_000)
  for (const file of [orphan, orphanMeta]) fs.utimesSync(file, anHourAgo, anHourAgo)
  t.equal(await files.removeLeftovers(60_000, new Date(now)), 2)
  t.notOk(fs.existsSync(orphan))
  t.notOk(fs.existsSync(orphanMeta))
  t.ok(fs.existsSync(writing), 'a temp file written to within the idle time is left alone')
  t.equal((await files.stat(stored))?.size, 5, 'the stored file is untouched')
  t.equal(await new FilesystemFileStore(tempDir()).removeLeftovers(0, new Date()), 0, 'a store with no files yet has nothing to remove')
})

t.test('a file is fsynced (its content, its sidecar, then its directory after the renames) before put answers', async (t) => {
  const root = tempDir()
  const files = new FilesystemFileStore(root)
  const probe = await fs.promises.open(path.join(root, 'probe'), 'w')
  const handlePrototype: { sync(this: fs.promises.FileHandle): Promise<void> } = Object.getPrototypeOf(probe)
  await probe.close()
  const sync = handlePrototype.sync
  const synced: string[] = []
  handlePrototype.sync = async function (this: fs.promises.FileHandle) {
    const target = fs.readlinkSync(`/proc/self/fd/${this.fd}`)
    // Which file a handle is of, from its descriptor (Linux): the temp names are <id>.<uuid>.tmp and <id>.json.<uuid>.tmp.
    synced.push(fs.statSync(target).isDirectory() ? 'directory' : path.basename(target).includes('.json.') ? 'sidecar' : 'content')
    return sync.call(this)
  }
  t.teardown(() => { handlePrototype.sync = sync })
  const id = newId()
  await files.put(id, Buffer.from('durable'), meta)
  t.same(synced.slice(0, 2).sort(), ['content', 'sidecar'])
  t.same(synced.slice(2), ['directory', 'directory'], 'then the new shard directory, and the root that names it')
  synced.length = 0
  const sameShard = `${newId().slice(0, -2)}${id.slice(-2)}`
  await files.put(sameShard, Buffer.from('again'), meta)
  t.same(synced.slice(2), ['directory'], 'in a shard that exists, only its directory')
})

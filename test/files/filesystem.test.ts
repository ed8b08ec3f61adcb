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

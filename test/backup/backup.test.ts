import { execFileSync, spawn } from 'node:child_process'
import { once } from 'node:events'
import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import t, { type Test } from 'tap'
import { backupDataDir } from '../../src/backup/backup.js'
import { BackupError, parseSummary } from '../../src/backup/manifest.js'
import { RESTORE_MARKER, restoreDataDir } from '../../src/backup/restore.js'
import { loadDemo } from '../../src/demo/index.js'
import { openEventDatabase } from '../../src/events/sqliteSchema.js'
import { createRuntime } from '../../src/runtime.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { tempDir, testConfig } from '../helpers/config.js'

const now = new Date('2026-11-24T10:00:00Z')

/** What a lending team reads: lists and documents of several read models, and a stored file's bytes. */
const answers = async (svc: TestApp, organizationId: string, ids: Record<string, string>) => {
  const headers = { 'config-organization-id': organizationId, 'organization-id': organizationId }
  const get = async (url: string) => {
    const response = await svc.call({ method: 'GET', url, token: svc.adminToken, headers })
    return { url, status: response.statusCode, body: response.json() }
  }
  const profile = await get(`/v1/profiles/${ids['profile.ana']}`)
  const fileId: unknown = profile.body.data.natural.WorkCertificateFileID
  const file = await svc.call({ method: 'GET', url: `/v1/debtor/${ids['profile.ana']}/profile/work-certificate/${String(fileId)}`, token: svc.adminToken })
  return {
    reads: [
      await get('/v1/profiles?limit=100'), profile, await get('/v1/credits?limit=100'), await get('/v1/credit-lines?limit=100'),
      await get(`/v1/credits/${ids['credit.ana-desembolsado']}`), await get('/v1/taxes'), await get('/v1/webhooks'),
      await get(`/v1/document/${ids['document.ana-loan-agreement']}/signature-scan/${ids['signature.ana-loan-agreement']}`),
    ],
    file: { status: file.statusCode, type: file.headers['content-type'], bytes: file.rawPayload.toString('base64') },
  }
}

const logIds = async (svc: TestApp, upTo: number): Promise<string[]> => {
  const ids: string[] = []
  for await (const event of svc.runtime.eventStore.readAll({ after: 0 })) if (event.position <= upTo) ids.push(event.id)
  return ids
}

t.test('a backup restores into a service that answers as the original did, files, keys and tokens included', async (t) => {
  for (const readStore of ['memory', 'sqlite'] as const) {
    await t.test(`${readStore} read store`, async (t) => {
      const original = await createTestApp(t, { config: { readStore, processesEnabled: false } })
      const demo = await loadDemo(original.runtime)
      const head = await original.runtime.eventStore.headPosition()
      await original.runtime.settle(head)
      const before = await answers(original, demo.organizationId, demo.ids)
      t.ok(before.reads.every((read) => read.status === 200), 'every read answers')
      t.equal(before.file.status, 200)

      const reported: string[] = []
      const target = path.join(tempDir(), 'backup')
      const { summary } = await backupDataDir({ dataDir: original.config.dataDir, target, now, report: (line) => reported.push(line) })
      t.same(summary.eventLog, { head, events: head }, 'the log as it stood')
      t.match(reported.join('\n'), new RegExp(`event log: ${head} events up to position ${head}`))
      t.match(reported.join('\n'), /stored files: \d+/)
      t.same(parseSummary(fs.readFileSync(path.join(target, 'backup.json'), 'utf8')), summary, 'the summary is on disk')
      t.same(fs.readdirSync(path.join(target, 'data')).filter((name) => /-(wal|shm)$/.test(name) || name.startsWith('instance.lock')), [],
        'no lock or SQLite side file in the copy')
      t.equal(fs.statSync(path.join(target, 'data', 'keys', 'data.key')).mode & 0o777, 0o600, 'keys stay private')
      if (readStore === 'sqlite') t.ok(fs.existsSync(path.join(target, 'data', 'read-store.sqlite')), 'the read models with their checkpoints')

      const dataDir = path.join(tempDir(), 'restored')
      await restoreDataDir({ backup: target, dataDir, now })
      t.notOk(fs.existsSync(path.join(dataDir, RESTORE_MARKER)), 'no unfinished mark once done')
      const restored = await createTestApp(t, { config: { readStore, processesEnabled: false, dataDir } })
      t.equal(await restored.runtime.eventStore.headPosition(), head)
      t.same(await logIds(restored, head), await logIds(original, head), 'the same events at the same positions')
      await restored.runtime.settle(head)
      // The original's token: the signing key came back with the log.
      const after = await answers({ ...restored, adminToken: original.adminToken }, demo.organizationId, demo.ids)
      t.same(after, before, 'the same answers, the stored file the same bytes')
    })
  }
})

t.test('a backup taken while the service writes holds a prefix of its log and every file that prefix names', async (t) => {
  const svc = await createTestApp(t, { config: { processesEnabled: false } })
  const demo = await loadDemo(svc.runtime)
  const organizationId = demo.organizationId
  const headers = { 'organization-id': organizationId, 'config-organization-id': organizationId }
  const taxCount = async (service: TestApp): Promise<number> =>
    (await service.call({ method: 'GET', url: '/v1/taxes', token: svc.adminToken, headers })).json().data.length
  const demoTaxes = await taxCount(svc)
  let writing = true
  let written = 0
  const writes = (async () => {
    while (writing) {
      const response = await svc.call({
        method: 'POST', url: '/v1/taxes', token: svc.adminToken, headers,
        payload: { name: `Tax ${written}`, percentage: 1.5, type: 'OTHER', applies_to: ['CREDIT'] },
      })
      if (response.statusCode >= 300) throw new Error(`write refused: ${response.statusCode} ${response.body}`)
      written++
    }
  })()
  await new Promise((resolve) => setTimeout(resolve, 50))
  const target = path.join(tempDir(), 'backup')
  const { summary } = await backupDataDir({ dataDir: svc.config.dataDir, target, now })
  writing = false
  await writes
  t.ok(written > 0, `${written} writes went on around the backup`)
  t.ok(summary.eventLog.head < await svc.runtime.eventStore.headPosition(), 'the service wrote past the backup')

  const dataDir = path.join(tempDir(), 'restored')
  await restoreDataDir({ backup: target, dataDir, now })
  const restored = await createTestApp(t, { config: { processesEnabled: false, dataDir } })
  t.same(await logIds(restored, summary.eventLog.head), await logIds(svc, summary.eventLog.head), 'a prefix of the log')
  const restoredTaxes = await taxCount(restored) - demoTaxes
  t.ok(restoredTaxes > 0 && restoredTaxes <= written, `${restoredTaxes} of the ${written} taxes written`)
  const before = await answers(svc, organizationId, demo.ids)
  const after = await answers({ ...restored, adminToken: svc.adminToken }, organizationId, demo.ids)
  t.same(after.file, before.file, 'the stored file is there')
})

/** A finished backup of a small service, for the refusals. */
const smallBackup = async (t: Test) => {
  const svc = await createTestApp(t, { config: { processesEnabled: false } })
  await loadDemo(svc.runtime)
  await svc.close()
  const target = path.join(tempDir(), 'backup')
  const { summary } = await backupDataDir({ dataDir: svc.config.dataDir, target, now })
  return { dataDir: svc.config.dataDir, target, summary }
}

t.test('a backup refuses a target that exists or lies inside DATA_DIR, and a DATA_DIR without a log', async (t) => {
  const { dataDir, target } = await smallBackup(t)
  await t.rejects(backupDataDir({ dataDir, target, now }), new BackupError(`${target} exists: a backup goes into a new directory`))
  await t.rejects(backupDataDir({ dataDir, target: path.join(dataDir, 'backups', 'one'), now }), { name: 'BackupError', message: /must be outside DATA_DIR/ })
  await t.rejects(backupDataDir({ dataDir: tempDir(), target: path.join(tempDir(), 'b'), now }), { name: 'BackupError', message: /holds no event log/ })
  t.same(fs.readdirSync(path.dirname(target)), ['backup'], 'no partial directory left behind')
})

t.test('a restore refuses a DATA_DIR that holds anything, and writes nothing there', async (t) => {
  const { target } = await smallBackup(t)
  const dataDir = tempDir()
  fs.writeFileSync(path.join(dataDir, 'notes.txt'), 'mine')
  await t.rejects(restoreDataDir({ backup: target, dataDir, now }), { name: 'BackupError', message: /is not empty \(1 entries\)/ })
  t.same(fs.readdirSync(dataDir), ['notes.txt'])
  await t.rejects(restoreDataDir({ backup: tempDir(), dataDir: path.join(tempDir(), 'd'), now }), { name: 'BackupError', message: /is not a finished backup/ })
})

t.test('a damaged backup is found by --check and by the restore, which leaves DATA_DIR marked so no service starts on it', async (t) => {
  const { target } = await smallBackup(t)
  const key = path.join(target, 'data', 'keys', 'signing-key.pem')
  const manifest = fs.readFileSync(path.join(target, 'manifest.jsonl'), 'utf8')
  const lines = manifest.trim().split('\n')
  const entryOf = (entryPath: string) => lines.findIndex((line) => JSON.parse(line).path === entryPath)
  t.ok(entryOf('keys/signing-key.pem') >= 0 && entryOf('events.sqlite') > entryOf('keys/signing-key.pem') && lines.some((line) => JSON.parse(line).path.startsWith('files/')),
    'keys before the log, files after it')
  fs.appendFileSync(key, ' ')

  await t.rejects(restoreDataDir({ backup: target, dataDir: tempDir(), now, checkOnly: true }), { name: 'BackupError', message: /keys\/signing-key\.pem differs from the manifest/ })
  const dataDir = path.join(tempDir(), 'restored')
  await t.rejects(restoreDataDir({ backup: target, dataDir, now }), { name: 'BackupError', message: /differs from the manifest.*stays marked as an unfinished restore/ })
  t.ok(fs.existsSync(path.join(dataDir, RESTORE_MARKER)))
  await t.rejects(createRuntime(testConfig({ dataDir })), { name: 'BackupError', message: /holds an unfinished restore/ })
})

t.test('a restore takes no manifest but the one the summary names, and no path outside DATA_DIR', async (t) => {
  const { target, summary } = await smallBackup(t)
  const manifestFile = path.join(target, 'manifest.jsonl')
  const original = fs.readFileSync(manifestFile, 'utf8')
  fs.writeFileSync(manifestFile, original.replace('"path":"keys/data.key"', '"path":"../data.key"'))
  await t.rejects(restoreDataDir({ backup: target, dataDir: tempDir(), now, checkOnly: true }), { name: 'BackupError', message: /is not the manifest backup\.json names/ })

  // Even with the summary forged to match, a path leaving DATA_DIR is refused before anything is written.
  const forged = fs.readFileSync(manifestFile)
  const { createHash } = await import('node:crypto')
  fs.writeFileSync(path.join(target, 'backup.json'), JSON.stringify({ ...summary, manifestSha256: createHash('sha256').update(forged).digest('hex') }))
  const dataDir = path.join(tempDir(), 'restored')
  await t.rejects(restoreDataDir({ backup: target, dataDir, now }), { name: 'BackupError', message: /line \d+ is not a valid entry/ })
  t.notOk(fs.existsSync(path.join(path.dirname(dataDir), 'data.key')), 'nothing written outside')
})

t.test('a stored file deleted while the backup runs is left out whole, content and record', async (t) => {
  const svc = await createTestApp(t, { config: { processesEnabled: false } })
  await loadDemo(svc.runtime)
  await svc.close()
  const filesDir = path.join(svc.config.dataDir, 'files')
  const shard = fs.readdirSync(filesDir).find((name) => fs.readdirSync(path.join(filesDir, name)).some((file) => file.endsWith('.json')))
  if (shard === undefined) throw new Error('the demo stores files')
  const sidecar = fs.readdirSync(path.join(filesDir, shard)).find((file) => file.endsWith('.json')) ?? ''
  // A file deleted after the backup listed its record: the record is there, its content gone.
  fs.rmSync(path.join(filesDir, shard, sidecar.slice(0, -'.json'.length)))
  const reported: string[] = []
  const target = path.join(tempDir(), 'backup')
  await backupDataDir({ dataDir: svc.config.dataDir, target, now, report: (line) => reported.push(line) })
  t.match(reported.join('\n'), /\(1 deleted while the backup ran, left out\)/)
  t.notOk(fs.existsSync(path.join(target, 'data', 'files', shard, sidecar)), 'no record without its content')
  t.notMatch(fs.readFileSync(path.join(target, 'manifest.jsonl'), 'utf8'), sidecar.slice(0, -'.json'.length))
  await restoreDataDir({ backup: target, dataDir: path.join(tempDir(), 'restored'), now })
})

t.test('stored files copied several at once keep the order they were listed in, each beside its record, and all come back', async (t) => {
  const { dataDir } = await smallBackup(t)
  const shard = path.join(dataDir, 'files', 'many')
  fs.mkdirSync(shard, { recursive: true })
  // Sizes that differ by far, so that copies running together finish out of order.
  for (let n = 0; n < 120; n++) {
    fs.writeFileSync(path.join(shard, `f${n}`), Buffer.alloc(n % 3 === 0 ? 512 * 1024 : 16, n))
    fs.writeFileSync(path.join(shard, `f${n}.json`), JSON.stringify({ n }))
  }
  const target = path.join(tempDir(), 'many')
  await backupDataDir({ dataDir, target, now })
  const listed = fs.readFileSync(path.join(target, 'manifest.jsonl'), 'utf8').trim().split('\n')
    .map((line) => String(JSON.parse(line).path)).filter((entry) => entry.startsWith('files/many/'))
  // The order the backup walks the folder in (readdir would sort it).
  const walked: string[] = []
  const folder = fs.opendirSync(shard)
  for (let entry = folder.readSync(); entry !== null; entry = folder.readSync()) if (entry.name.endsWith('.json')) walked.push(`files/many/${entry.name}`)
  folder.closeSync()
  t.same(listed, walked.flatMap((sidecar) => [sidecar, sidecar.slice(0, -'.json'.length)]), 'in the order walked, each record then its content')
  const restored = path.join(tempDir(), 'restored')
  await restoreDataDir({ backup: target, dataDir: restored, now })
  for (const n of [0, 1, 59, 119]) {
    t.same(fs.readFileSync(path.join(restored, 'files', 'many', `f${n}`)), fs.readFileSync(path.join(shard, `f${n}`)), `file ${n}`)
  }
  t.equal(fs.readdirSync(path.join(restored, 'files', 'many')).length, 240)
})

t.test('links are followed, so keys mounted from a secret store come back; a link to nothing or a special file stops the backup', async (t) => {
  const { dataDir } = await smallBackup(t)
  const secrets = tempDir('credit-secrets-')
  const key = path.join(dataDir, 'keys', 'data.key')
  const sealed = fs.readFileSync(key)
  fs.renameSync(key, path.join(secrets, 'data.key'))
  fs.symlinkSync(path.join(secrets, 'data.key'), key)
  const target = path.join(tempDir(), 'backup')
  await backupDataDir({ dataDir, target, now })
  t.match(fs.readFileSync(path.join(target, 'manifest.jsonl'), 'utf8'), /"path":"keys\/data\.key"/)
  const restored = path.join(tempDir(), 'restored')
  await restoreDataDir({ backup: target, dataDir: restored, now })
  t.ok(fs.lstatSync(path.join(restored, 'keys', 'data.key')).isFile(), 'restored as a file')
  t.same(fs.readFileSync(path.join(restored, 'keys', 'data.key')), sealed, 'the same data key: sealed secrets read back')

  fs.symlinkSync(path.join(secrets, 'gone.pem'), path.join(dataDir, 'keys', 'extra.pem'))
  const parent = tempDir()
  await t.rejects(backupDataDir({ dataDir, target: path.join(parent, 'b'), now }), { name: 'BackupError', message: /keys\/extra\.pem in DATA_DIR is a link to nothing/ })
  fs.rmSync(path.join(dataDir, 'keys', 'extra.pem'))
  execFileSync('mkfifo', [path.join(dataDir, 'pipe')])
  await t.rejects(backupDataDir({ dataDir, target: path.join(parent, 'b'), now }), { name: 'BackupError', message: /pipe in DATA_DIR is neither a file nor a directory/ })
  t.same(fs.readdirSync(parent), [], 'nothing left behind')
})

t.test('a target inside DATA_DIR through a link is refused, and so is a DATA_DIR a restore has not finished', async (t) => {
  const { dataDir, target } = await smallBackup(t)
  const alias = path.join(tempDir(), 'alias')
  fs.symlinkSync(dataDir, alias)
  await t.rejects(backupDataDir({ dataDir, target: path.join(alias, 'backups', 'nightly'), now }), { name: 'BackupError', message: /must be outside DATA_DIR/ })
  await t.rejects(backupDataDir({ dataDir: alias, target: path.join(dataDir, 'backups', 'nightly'), now }), { name: 'BackupError', message: /must be outside DATA_DIR/ })
  t.notOk(fs.existsSync(path.join(dataDir, 'backups')), 'nothing written inside')

  const half = path.join(tempDir(), 'half')
  fs.appendFileSync(path.join(target, 'data', 'keys', 'signing-key.pem'), ' ')
  await t.rejects(restoreDataDir({ backup: target, dataDir: half, now }), { name: 'BackupError' })
  await t.rejects(backupDataDir({ dataDir: half, target: path.join(tempDir(), 'b'), now }), { name: 'BackupError', message: /holds an unfinished restore/ })
})

t.test('a volume\'s lost+found is neither backed up nor in the way of a restore', async (t) => {
  const { dataDir } = await smallBackup(t)
  fs.mkdirSync(path.join(dataDir, 'lost+found'), { mode: 0o700 })
  fs.writeFileSync(path.join(dataDir, 'lost+found', '#1234'), 'fsck found this')
  const target = path.join(tempDir(), 'backup')
  await backupDataDir({ dataDir, target, now })
  t.notOk(fs.existsSync(path.join(target, 'data', 'lost+found')))
  const volume = tempDir()
  fs.mkdirSync(path.join(volume, 'lost+found'))
  await restoreDataDir({ backup: target, dataDir: volume, now })
  t.ok(fs.existsSync(path.join(volume, 'events.sqlite')))
})

t.test('a backup finishes while another process keeps appending to the log, and holds one consistent commit of it', async (t) => {
  const dataDir = tempDir()
  const file = path.join(dataDir, 'events.sqlite')
  const db = openEventDatabase(file, 'NORMAL')
  const insert = db.prepare("INSERT INTO events (stream_id, revision, id, type, data, metadata, recorded_at) VALUES (?, 0, ?, 'Seeded', ?, '{}', '2026-11-24')")
  db.transaction(() => {
    for (let i = 0; i < 60_000; i++) insert.run(`s-${i}`, `seed-${i}`, JSON.stringify({ filler: 'x'.repeat(300) }))
  })()
  db.close()
  // Commits every few hundred microseconds from another process: an online backup copied in steps would start over at each of them.
  const writer = spawn(process.execPath, ['-e', `
    const Database = require('better-sqlite3')
    const db = new Database(process.argv[1]); db.pragma('journal_mode = WAL'); db.pragma('synchronous = NORMAL')
    const insert = db.prepare("INSERT INTO events (stream_id, revision, id, type, data, metadata, recorded_at) VALUES (?, 0, ?, 'Written', '{}', '{}', '2026-11-24')")
    let n = 0
    process.stdout.write('writing\\n')
    // A deadline of its own: killed with the test, or not, it never writes for good.
    for (const end = Date.now() + 60000; Date.now() < end;) db.transaction(() => { for (let i = 0; i < 5; i++) { insert.run('w-' + n, 'w-' + n); n++ } })()
  `, file], { cwd: path.resolve(import.meta.dirname, '../..'), stdio: ['ignore', 'pipe', 'inherit'] })
  t.teardown(() => { writer.kill('SIGKILL') })
  await once(writer.stdout, 'data')
  await new Promise((resolve) => setTimeout(resolve, 200))
  const { summary } = await backupDataDir({ dataDir, target: path.join(tempDir(), 'backup'), now })
  const stillWriting = writer.exitCode === null
  writer.kill('SIGKILL')
  await once(writer, 'exit')
  t.ok(stillWriting, 'done while the writer still wrote')
  t.equal(summary.eventLog.head, summary.eventLog.events, 'no gap: one commit\'s state')
  t.ok(summary.eventLog.events > 60_000, `${summary.eventLog.events - 60_000} written events in the copy`)
  const after = new Database(file, { readonly: true })
  const total = after.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM events').get()?.n ?? 0
  after.close()
  t.ok(total > summary.eventLog.events, `the writer went on past the copy (${total} events by the end)`)
})

import { Writable } from 'node:stream'
import t from 'tap'
import { writeInTurn } from '../../src/shared/output.js'

t.test('writing in turn never lets more than the buffer and one line wait in a slow stream', async (t) => {
  let most = 0
  const slow = new Writable({
    highWaterMark: 1024,
    write(_chunk, _encoding, done) {
      setTimeout(done, 1)
    },
  })
  const line = `${'x'.repeat(99)}\n`
  for (let i = 0; i < 200; i++) {
    await writeInTurn(slow, line)
    most = Math.max(most, slow.writableLength)
  }
  t.ok(most <= 1024 + line.length, `at most ${most} bytes waited`)
  let unbounded = 0
  const ignoring = new Writable({ highWaterMark: 1024, write(_chunk, _encoding, done) { setTimeout(done, 1) } })
  for (let i = 0; i < 200; i++) unbounded = Math.max(unbounded, (ignoring.write(line), ignoring.writableLength))
  t.ok(unbounded > 10 * 1024, `writing without waiting gathers ${unbounded} bytes`)
})

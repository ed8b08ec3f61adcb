import t from 'tap'
import { KeyedLock } from '../../src/shared/keyedLock.js'

const tick = () => new Promise<void>((resolve) => setImmediate(resolve))

t.test('work under one key runs one at a time, in arrival order; other keys do not wait', async (t) => {
  const lock = new KeyedLock()
  const log: string[] = []
  const work = (name: string) => async () => {
    log.push(`${name} start`)
    await tick()
    await tick()
    log.push(`${name} end`)
    return name
  }
  const results = await Promise.all([lock.run('a', work('a1')), lock.run('a', work('a2')), lock.run('b', work('b1'))])
  t.same(results, ['a1', 'a2', 'b1'])
  t.same(log.filter((line) => line.startsWith('a')), ['a1 start', 'a1 end', 'a2 start', 'a2 end'])
  t.ok(log.indexOf('b1 start') < log.indexOf('a1 end'), 'b1 started while a1 held its own key')
})

t.test('a failing work gives its error to its caller and releases the key', async (t) => {
  const lock = new KeyedLock()
  const failing = lock.run('a', async () => { throw new Error('refused') })
  const next = lock.run('a', async () => 'ran')
  await t.rejects(failing, { message: 'refused' })
  t.equal(await next, 'ran')
  t.equal(await lock.run('a', async () => 'again'), 'again', 'nothing is left holding the key')
})

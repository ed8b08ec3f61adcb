import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { mapInOrder } from '../../src/shared/mapInOrder.js'

async function* numbers(count: number): AsyncGenerator<number> {
  for (let n = 0; n < count; n++) yield n
}

t.test('results come in input order with at most the given number of mappers running', async (t) => {
  let running = 0
  let most = 0
  const results: number[] = []
  for await (const value of mapInOrder(numbers(40), async (n) => {
    running++
    most = Math.max(most, running)
    // Later items finish first: the order must come from the input, not from completion.
    await sleep((40 - n) % 7)
    running--
    return n * 10
  }, 4)) results.push(value)
  t.same(results, Array.from({ length: 40 }, (_, n) => n * 10))
  t.equal(most, 4)
})

t.test('a failing mapper stops the iteration only after the mappers already running have finished', async (t) => {
  const finished: number[] = []
  const collected: number[] = []
  await t.rejects(async () => {
    for await (const value of mapInOrder(numbers(100), async (n) => {
      // Item 2 fails once all four are running; item 3 outlasts the error's arrival at the caller.
      await sleep(n === 2 ? 5 : n === 3 ? 60 : 20)
      if (n === 2) throw new Error('item 2 failed')
      finished.push(n)
      return n
    }, 4)) collected.push(value)
  }, { message: 'item 2 failed' })
  t.same(collected, [0, 1], 'the results before the failure are delivered')
  const afterReturn = [...finished]
  t.ok(afterReturn.includes(3), 'a mapper running beside the failing one finished before the error reached the caller')
  await sleep(100)
  t.same(finished, afterReturn, 'nothing ran after the caller got the error')
  t.ok(finished.length <= 8, `no more than the running and the read-ahead items were mapped (${finished.length})`)
})

t.test('a consumer that stops early waits for the running mappers too', async (t) => {
  let done = 0
  for await (const value of mapInOrder(numbers(100), async (n) => {
    await sleep(10)
    done++
    return n
  }, 3)) if (value === 0) break
  const atBreak = done
  await sleep(40)
  t.equal(done, atBreak, 'no mapper finished after the loop was left')
})

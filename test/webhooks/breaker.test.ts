import t from 'tap'
import { breakerKey, DestinationBreakers, isRefusal, type Admission, type Refusal } from '../../src/webhooks/breaker.js'
import { ManualClock } from '../../src/shared/clock.js'

const ORIGIN = 'https://erp.example'
const ERP = breakerKey('org-1', 'webhook-1', 'webhook', ORIGIN)

/** Breakers whose wall clock and monotonic clock move together, by hand. */
const given = (timeouts = 3, openMs = 60_000) => {
  const clock = new ManualClock('2026-11-24T10:00:00.000Z')
  let monotonic = 1_000
  const breakers = new DestinationBreakers({ timeouts, openMs, clock, monotonic: () => monotonic })
  const advance = (ms: number) => {
    clock.advance(ms)
    monotonic += ms
  }
  return { clock, breakers, advance }
}

const admitted = (answer: Admission | Refusal): Admission => {
  if (isRefusal(answer)) throw new Error(`refused until ${answer.until.toISOString()}`)
  return answer
}

/** Admits one exchange under the key and records how it ended. */
const exchange = (breakers: DestinationBreakers, ending: 'answered' | 'timedOut' | 'failedFast', key = ERP, manual = false) =>
  breakers.record(admitted(breakers.admit(key, manual)), ending)

t.test('a breaker whose automatic exchanges time out the configured number of times in a row refuses them until its time is up', async (t) => {
  const { breakers, advance } = given(3, 60_000)
  t.equal(exchange(breakers, 'timedOut'), null)
  t.equal(exchange(breakers, 'timedOut'), null)
  t.equal(exchange(breakers, 'timedOut'), 'opened', 'the third timeout in a row opens it')
  const refusal = breakers.admit(ERP, false)
  t.ok(isRefusal(refusal))
  t.match(refusal, { timeouts: 3, until: new Date('2026-11-24T10:01:00.000Z') })
  advance(59_999)
  t.match(breakers.admit(ERP, false), { until: new Date('2026-11-24T10:01:00.000Z') }, 'still refused a millisecond before its time')
})

t.test('an answer of any kind in between starts the count of timeouts again', async (t) => {
  const { breakers } = given(2)
  exchange(breakers, 'timedOut')
  exchange(breakers, 'answered')
  t.equal(exchange(breakers, 'timedOut'), null, 'one timeout since the answer')
  exchange(breakers, 'failedFast')
  t.equal(exchange(breakers, 'timedOut'), null, 'a refused connection fails fast on its own, and counts as an answer')
  t.equal(exchange(breakers, 'timedOut'), 'opened')
})

t.test('once its time is up, one automatic exchange is let through at a time: its timeout opens the breaker again, its answer closes it', async (t) => {
  const { breakers, advance } = given(1, 1000)
  exchange(breakers, 'timedOut')
  advance(1000)
  const probe = admitted(breakers.admit(ERP, false))
  t.equal(probe.probe, true)
  t.ok(isRefusal(breakers.admit(ERP, false)), 'a second exchange waits for the first to end')
  t.equal(breakers.record(probe, 'timedOut'), null, 'still open')
  t.match(breakers.admit(ERP, false), { until: new Date('2026-11-24T10:00:02.000Z') }, 'open for another full period from the probe\'s timeout')
  advance(1000)
  t.equal(breakers.record(admitted(breakers.admit(ERP, false)), 'answered'), 'closed')
  t.match(admitted(breakers.admit(ERP, false)), { key: ERP, probe: false }, 'closed: every exchange goes')
  t.equal(exchange(breakers, 'timedOut'), 'opened', 'the count starts from nothing again')
})

t.test('a probe that was not made after all (its token request failed) passes its turn to the next send', async (t) => {
  const { breakers, advance } = given(1, 1000)
  exchange(breakers, 'timedOut')
  advance(1000)
  breakers.abandon(admitted(breakers.admit(ERP, false)))
  t.match(admitted(breakers.admit(ERP, false)), { probe: true })
})

t.test('manual exchanges go through an open breaker and are not counted, but their answer closes it', async (t) => {
  const { breakers } = given(2)
  for (let i = 0; i < 5; i++) t.equal(exchange(breakers, 'timedOut', ERP, true), null)
  t.notOk(isRefusal(breakers.admit(ERP, false)), 'a person\'s timeouts open nothing')
  exchange(breakers, 'timedOut')
  exchange(breakers, 'timedOut')
  const manual = breakers.admit(ERP, true)
  t.same(manual, { key: ERP, manual: true, probe: false }, 'let through while open')
  t.equal(breakers.record(admitted(manual), 'answered'), 'closed')
  t.notOk(isRefusal(breakers.admit(ERP, false)))
})

t.test('a probe timing out after a person\'s answer closed the breaker counts as one timeout, not a reopening', async (t) => {
  const { breakers, advance } = given(2, 1000)
  exchange(breakers, 'timedOut')
  exchange(breakers, 'timedOut')
  advance(1000)
  const probe = admitted(breakers.admit(ERP, false))
  exchange(breakers, 'answered', ERP, true)
  t.equal(breakers.record(probe, 'timedOut'), null)
  t.notOk(isRefusal(breakers.admit(ERP, false)), 'closed: one timeout in a row')
  t.equal(exchange(breakers, 'timedOut'), 'opened', 'the second opens it, and says so')
})

t.test('an automatic exchange let through before the breaker opened does not close it by answering late', async (t) => {
  const { breakers } = given(1)
  const early = admitted(breakers.admit(ERP, false))
  exchange(breakers, 'timedOut')
  t.equal(breakers.record(early, 'answered'), null)
  t.ok(isRefusal(breakers.admit(ERP, false)))
})

t.test('the open period is measured on the monotonic clock: the wall clock stepped back does not lengthen it', async (t) => {
  const clock = new ManualClock('2026-11-24T10:00:00.000Z')
  let monotonic = 0
  const breakers = new DestinationBreakers({ timeouts: 1, openMs: 60_000, clock, monotonic: () => monotonic })
  exchange(breakers, 'timedOut')
  clock.advance(-3_600_000)
  monotonic += 60_000
  t.match(admitted(breakers.admit(ERP, false)), { probe: true })
})

t.test('each webhook of each organization, and its token request apart, has a breaker of its own; a test of an unstored configuration none', async (t) => {
  const { breakers } = given(1)
  exchange(breakers, 'timedOut', breakerKey('org-1', 'webhook-1', 'webhook', ORIGIN))
  t.ok(isRefusal(breakers.admit(breakerKey('org-1', 'webhook-1', 'webhook', ORIGIN), false)))
  t.notOk(isRefusal(breakers.admit(breakerKey('org-1', 'webhook-1', 'token', ORIGIN), false)), 'its token request')
  t.notOk(isRefusal(breakers.admit(breakerKey('org-1', 'webhook-2', 'webhook', ORIGIN), false)), 'another webhook')
  t.notOk(isRefusal(breakers.admit(breakerKey('org-2', 'webhook-1', 'webhook', ORIGIN), false)), 'another organization')
  t.equal(breakerKey('org-1', null, 'webhook', ORIGIN), null)
  t.same(breakers.admit(null, false), { key: null, manual: false, probe: false })
  t.equal(breakers.record({ key: null, manual: false, probe: false }, 'timedOut'), null)
})

t.test('a webhook moved to another destination is not refused for the timeouts of the one it left, nor does an answer there close that one', async (t) => {
  const { breakers } = given(1)
  const moved = breakerKey('org-1', 'webhook-1', 'webhook', 'https://erp-new.example')
  t.equal(exchange(breakers, 'timedOut'), 'opened')
  t.notOk(isRefusal(breakers.admit(moved, false)), 'the new destination was never asked: it is tried')
  t.equal(exchange(breakers, 'answered', moved, true), null, 'a person\'s answer from the new destination')
  t.ok(isRefusal(breakers.admit(ERP, false)), 'leaves the breaker of the one that timed out open')
  t.notOk(isRefusal(breakers.admit(breakerKey('org-1', 'webhook-1', 'webhook', 'http://erp.example'), false)), 'another scheme is another destination')
})

t.test('with 0 timeouts configured nothing is counted or refused', async (t) => {
  const { breakers } = given(0)
  for (let i = 0; i < 5; i++) t.equal(exchange(breakers, 'timedOut'), null)
  t.notOk(isRefusal(breakers.admit(ERP, false)))
})

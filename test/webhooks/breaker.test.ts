import t from 'tap'
import { DestinationBreakers, isRefusal, type Admission, type Refusal } from '../../src/webhooks/breaker.js'
import { ManualClock } from '../../src/shared/clock.js'

const ERP = 'https://erp.example.com/hooks/credit'

const given = (timeouts = 3, openMs = 60_000) => {
  const clock = new ManualClock('2026-11-24T10:00:00.000Z')
  return { clock, breakers: new DestinationBreakers({ timeouts, openMs, clock }) }
}

const admitted = (answer: Admission | Refusal): Admission => {
  if (isRefusal(answer)) throw new Error(`refused until ${answer.until.toISOString()}`)
  return answer
}

/** Admits one automatic exchange to the URL and records how it ended. */
const exchange = (breakers: DestinationBreakers, ending: 'answered' | 'timedOut' | 'failedFast', url = ERP) =>
  breakers.record(admitted(breakers.admit(url, false)), ending)

t.test('a destination that times out the configured number of times in a row refuses automatic exchanges until its time is up', async (t) => {
  const { clock, breakers } = given(3, 60_000)
  t.equal(exchange(breakers, 'timedOut'), null)
  t.equal(exchange(breakers, 'timedOut'), null)
  t.equal(exchange(breakers, 'timedOut'), 'opened', 'the third timeout in a row opens it')
  const refusal = breakers.admit(`${ERP}?again=1`, false)
  t.ok(isRefusal(refusal))
  t.match(refusal, { timeouts: 3, until: new Date('2026-11-24T10:01:00.000Z') })
  clock.advance(59_999)
  t.ok(isRefusal(breakers.admit(ERP, false)), 'still refused a millisecond before its time')
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

t.test('once its time is up, one exchange is let through at a time: its timeout opens the breaker again, its answer closes it', async (t) => {
  const { clock, breakers } = given(1, 1000)
  exchange(breakers, 'timedOut')
  clock.advance(1000)
  const probe = admitted(breakers.admit(ERP, false))
  t.equal(probe.probe, true)
  t.ok(isRefusal(breakers.admit(ERP, false)), 'a second exchange waits for the first to end')
  t.equal(breakers.record(probe, 'timedOut'), null, 'still open')
  t.match(breakers.admit(ERP, false), { until: new Date('2026-11-24T10:00:02.000Z') }, 'open for another full period from the probe\'s timeout')
  clock.advance(1000)
  t.equal(breakers.record(admitted(breakers.admit(ERP, false)), 'answered'), 'closed')
  t.same(admitted(breakers.admit(ERP, false)), { key: 'https://erp.example.com', probe: false }, 'closed: every exchange goes')
  t.equal(exchange(breakers, 'timedOut'), 'opened', 'the count starts from nothing again')
})

t.test('a manual exchange goes through an open breaker, and its answer closes it', async (t) => {
  const { breakers } = given(1)
  exchange(breakers, 'timedOut')
  const manual = breakers.admit(ERP, true)
  t.same(manual, { key: 'https://erp.example.com', probe: true })
  t.equal(breakers.record(admitted(manual), 'answered'), 'closed')
  t.notOk(isRefusal(breakers.admit(ERP, false)))
})

t.test('an exchange let through before the breaker opened does not close it by answering late', async (t) => {
  const { breakers } = given(1)
  const early = admitted(breakers.admit(ERP, false))
  exchange(breakers, 'timedOut')
  t.equal(breakers.record(early, 'answered'), null)
  t.ok(isRefusal(breakers.admit(ERP, false)))
})

t.test('destinations are told apart by scheme, host and port, never by path or query', async (t) => {
  const { breakers } = given(1)
  exchange(breakers, 'timedOut', 'https://erp.example.com/a')
  t.ok(isRefusal(breakers.admit('https://erp.example.com/b?x=1', false)), 'another path of the same destination')
  t.notOk(isRefusal(breakers.admit('https://erp.example.com:8443/a', false)), 'another port')
  t.notOk(isRefusal(breakers.admit('http://erp.example.com/a', false)), 'another scheme')
  t.notOk(isRefusal(breakers.admit('https://crm.example.com/a', false)), 'another host')
})

t.test('with 0 timeouts configured, or a URL that does not parse, nothing is counted or refused', async (t) => {
  const off = given(0).breakers
  for (let i = 0; i < 5; i++) t.equal(exchange(off, 'timedOut'), null)
  t.notOk(isRefusal(off.admit(ERP, false)))
  const { breakers } = given(1)
  t.same(breakers.admit('not a url', false), { key: null, probe: false })
  t.equal(breakers.record({ key: null, probe: false }, 'timedOut'), null)
})

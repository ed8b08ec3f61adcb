import t from 'tap'
import type { CreditLineConfiguration } from '../../src/events/creditLine.js'
import { streamName } from '../../src/events/streams.js'
import { schemaVersionOf } from '../../src/events/upcasters.js'
import { newId } from '../../src/shared/ids.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { createDebtor, lending, type Lending } from '../helpers/lending.js'
import { defaultConfigOf } from '../helpers/organizations.js'

/** A USD line's amounts and rate spelled with leading zeros and extra trailing zeros. */
const oddlySpelled = {
  name: 'Dólares', currency: 'USD', jurisdictionCode: 'US',
  principalMin: '000500', principalMax: '20000000.0000', principalDefault: '1000000.0', rate: '012.50',
}

const lineEvents = async (svc: TestApp, creditLineId: string) => {
  const events: Array<{ type: string; data: Record<string, unknown> }> = []
  for await (const event of svc.runtime.eventStore.readStream(streamName('creditLine', creditLineId))) {
    events.push({ type: event.type, data: event.data as Record<string, unknown> })
  }
  return events
}

const readLine = async (l: Lending, id: string) => (await l.call('GET', `/v1/credit-lines/${id}`)).json().data.creditLine

t.test('a line\'s amounts are recorded at the currency\'s minor unit and its rate as a plain decimal, whatever the spelling sent', async (t) => {
  const svc = await createTestApp(t)
  const l = await lending(svc)
  const created = await l.call('POST', '/v1/credit-lines', { ...oddlySpelled, timeMin: 6, timeMax: 36, timeDefault: 12 })
  t.equal(created.statusCode, 201)
  const canonical = { principalMin: '500.00', principalDefault: '1000000.00', principalMax: '20000000.00', rate: '12.5' }
  t.match(created.json().data.creditLine, canonical, 'the creation answers the canonical strings')
  const id: string = created.json().data.creditLine.ID
  t.match(await readLine(l, id), canonical, 'GET /v1/credit-lines/{id}')
  const product = (await l.call('GET', `/v1/products/${id}`)).json().data.product
  t.match(product, canonical, 'GET /v1/products/{id}')
  const listed = (await svc.call({ method: 'GET', url: '/v1/products?currency=USD' })).json().data.products
  t.match(listed, [{ ID: id, principalMin: '500.00', principalMax: '20000000.00', rate: '12.5' }], 'GET /v1/products')
  const [event] = await lineEvents(svc, id)
  t.match(event, { type: 'CreditLineCreated', data: { configuration: canonical } }, 'the event records them so')
})

t.test('a credit requested on such a line carries the line\'s canonical rate', async (t) => {
  const svc = await createTestApp(t)
  const l = await lending(svc)
  const creditLineId = await l.createLine({ ...oddlySpelled, rateType: 'FIXED' })
  const credit = await l.requestCredit({ creditLineId, debtorId: await createDebtor(svc.runtime, svc.organizationId) })
  t.equal(credit['rate'], '12.5')
  t.equal(credit['principal'], '1000000.00', 'the line\'s default principal')
  const events = (await l.call('GET', `/v1/credits/${credit.ID}/events`)).json().data.events
  t.match(events[0], { type: 'CreditRequested', data: { rate: '12.5', principal: '1000000.00' } })
})

t.test('a PATCH of the currency alone rewrites the amounts at the new currency\'s minor unit, and refuses amounts it cannot hold', async (t) => {
  const svc = await createTestApp(t)
  const l = await lending(svc)
  const id = await l.createLine(oddlySpelled)
  const yen = await l.call('PATCH', `/v1/credit-lines/${id}`, { currency: 'JPY' })
  t.equal(yen.statusCode, 200)
  const inYen = { currency: 'JPY', principalMin: '500', principalDefault: '1000000', principalMax: '20000000' }
  t.match(yen.json().data.creditLine, inYen)
  t.match(await readLine(l, id), inYen)
  t.match((await l.call('GET', `/v1/products/${id}`)).json().data.product, inYen)
  t.same((await lineEvents(svc, id))[1]?.data['changes'], inYen, 'the update records the rewritten amounts with the currency')

  const dinar = await l.call('PATCH', `/v1/credit-lines/${id}`, { currency: 'BHD' })
  t.equal(dinar.statusCode, 200)
  t.match(dinar.json().data.creditLine, { currency: 'BHD', principalMin: '500.000', principalDefault: '1000000.000', principalMax: '20000000.000' })

  const cents = await l.createLine({ ...oddlySpelled, principalMin: '500.50' })
  const refused = await l.call('PATCH', `/v1/credit-lines/${cents}`, { currency: 'JPY' })
  t.equal(refused.statusCode, 400)
  t.same(refused.json().data.errors, [{ field: 'body.principalMin', message: 'has more decimals than JPY allows' }])
  t.match(await readLine(l, cents), { currency: 'USD', principalMin: '500.50', principalMax: '20000000.00' }, 'a refused PATCH changes nothing')
  t.equal((await lineEvents(svc, cents)).length, 1)
})

t.test('a PATCH that only spells the recorded values differently records no change', async (t) => {
  const svc = await createTestApp(t)
  const l = await lending(svc)
  const id = await l.createLine(oddlySpelled)
  const before = await readLine(l, id)
  const same = await l.call('PATCH', `/v1/credit-lines/${id}`, {
    principalMin: '500', principalDefault: '0001000000.000', principalMax: '20000000.0', rate: '12.50000', currency: 'USD',
  })
  t.equal(same.statusCode, 200)
  t.same(same.json().data.creditLine, before, 'the line as it was, updatedAt included')
  t.same((await lineEvents(svc, id)).map((e) => e.type), ['CreditLineCreated'], 'no CreditLineUpdated')

  const euro = await l.call('PATCH', `/v1/credit-lines/${id}`, { currency: 'EUR', principalMax: '20000000', rate: '013.0' })
  t.equal(euro.statusCode, 200)
  t.same((await lineEvents(svc, id))[1]?.data['changes'], { currency: 'EUR', rate: '13' },
    'only what changes in value: the amounts keep their strings at a currency of the same minor unit')
})

t.test('a line recorded before amounts were canonical keeps its strings, compares by value, and lends at its canonical rate', async (t) => {
  const svc = await createTestApp(t)
  const l = await lending(svc)
  const creditLineId = newId()
  const at = svc.runtime.clock.now().toISOString()
  const configuration: CreditLineConfiguration = {
    name: 'Antigua', description: '', principalMin: '000500', principalMax: '20000000.0000', principalDefault: '1000000.0', timeMin: 6, timeMax: 36,
    timeDefault: 12, rate: '012.50', rateType: 'FIXED', entityConfigID: await defaultConfigOf(svc, svc.organizationId), currency: 'USD',
    jurisdictionCode: 'US', jurisdiction: { code: 'US', name: 'United States' }, gatewayMethods: [], disbursementMethods: [], availableDays: 0,
    conditions: [], benefits: [], active: true, provider: 'manual', requireDistinctApprover: false, onOrderWebhooks: [], onDeliveredWebhooks: [],
  }
  const appended = await svc.runtime.eventStore.append(streamName('creditLine', creditLineId), [{
    id: newId(), type: 'CreditLineCreated', data: { creditLineId, organizationId: svc.organizationId, configuration, createdAt: at },
    metadata: { organizationId: svc.organizationId, actorId: 'test', correlationId: newId(), causationId: null, occurredAt: at, schemaVersion: schemaVersionOf('CreditLineCreated') },
  }], 'no_stream')
  await svc.runtime.settle(appended.position)
  t.match(await readLine(l, creditLineId), { principalMin: '000500', principalMax: '20000000.0000', rate: '012.50' }, 'history is not rewritten')

  const equal = await l.call('PATCH', `/v1/credit-lines/${creditLineId}`, { principalMin: '500.00', rate: '12.5' })
  t.equal(equal.statusCode, 200)
  t.equal((await lineEvents(svc, creditLineId)).length, 1, 'equal in value: nothing recorded')
  const renamed = await l.call('PATCH', `/v1/credit-lines/${creditLineId}`, { name: 'Renombrada' })
  t.equal(renamed.statusCode, 200)
  t.same((await lineEvents(svc, creditLineId))[1]?.data['changes'], { name: 'Renombrada' }, 'another field changes alone')

  const credit = await l.requestCredit({ creditLineId, debtorId: await createDebtor(svc.runtime, svc.organizationId) })
  t.equal(credit['rate'], '12.5')
  t.equal(credit['principal'], '1000000.00')
})

import t, { type Test } from 'tap'
import { profileAggregate } from '../../src/commands/profile.js'
import { ManualClock } from '../../src/shared/clock.js'
import { newId } from '../../src/shared/ids.js'
import { createTestApp } from '../helpers/app.js'
import { createOrganization, createProfile, memberToken } from '../helpers/organizations.js'

const ana = { firstName: 'Ana', middleName: 'María', lastName: 'Gómez', secondLastName: 'Restrepo', documentType: 'CC' as const, documentNumber: '1020304050' }
const andes = { businessName: 'Andes Coffee Export S.A.S.', documentType: 'NIT' as const, documentNumber: '900123456' }

const setup = async (t: Test) => {
  const clock = new ManualClock('2026-01-15T12:00:00.000Z')
  // Tokens outlive the clock moves of the expiry tests.
  const svc = await createTestApp(t, { clock, config: { accessTokenTtl: 400 * 86_400 } })
  const call = (options: { method: 'GET' | 'POST' | 'PATCH'; url: string; payload?: object; token?: string; organizationId?: string }) =>
    svc.call({ token: svc.adminToken, organizationId: svc.organizationId, ...options })
  const setLimit = async (debtorId: string, body: Record<string, string> = {}, organizationId = svc.organizationId) => {
    const response = await call({
      method: 'POST', url: '/v1/creditor/credit-limits', organizationId,
      payload: { debtorId, maxAmount: '5000000.00', currency: 'COP', expirationDate: '2026-12-31', ...body },
    })
    if (response.statusCode !== 201) throw new Error(response.body)
    const created: { creditLimit: { creditLimitId: string } } = response.json()
    return created.creditLimit.creditLimitId
  }
  return { svc, clock, call, setLimit }
}

t.test('a creditor sets a limit for one of its debtors', async (t) => {
  const { svc, call } = await setup(t)
  const debtorId = await createProfile(svc, svc.organizationId, { natural: ana })
  const created = await call({
    method: 'POST', url: '/v1/creditor/credit-limits', payload: { debtorId, maxAmount: '5000000', currency: 'COP', expirationDate: '2026-12-31' },
  })
  t.equal(created.statusCode, 201)
  const body = created.json()
  t.equal(body.creditorId, svc.organizationId)
  t.same(body.creditLimit, {
    creditLimitId: body.creditLimit.creditLimitId,
    debtorInfo: { debtorId, name: 'Ana María Gómez Restrepo', documentType: 'CC', documentNumber: '1020304050' },
    maxAmount: '5000000.00', usedAmount: '0.00', availableAmount: '5000000.00', currency: 'COP', status: 'active',
    expirationDate: '2026-12-31', createdAt: '2026-01-15T12:00:00.000Z', updatedAt: '2026-01-15T12:00:00.000Z',
  })
  const again = await call({
    method: 'POST', url: '/v1/creditor/credit-limits', payload: { debtorId, maxAmount: '1', currency: 'COP', expirationDate: '2026-12-31' },
  })
  t.equal(again.statusCode, 409, 'one limit per debtor and currency')
  t.match(again.json().data, { code: 'ALREADY_EXISTS', creditLimitId: body.creditLimit.creditLimitId })
  const dollars = await call({
    method: 'POST', url: '/v1/creditor/credit-limits', payload: { debtorId, maxAmount: '1000.5', currency: 'USD', expirationDate: '2026-06-30' },
  })
  t.equal(dollars.statusCode, 201, 'another currency is another limit')
  t.equal(dollars.json().creditLimit.maxAmount, '1000.50')
  const one = await call({ method: 'GET', url: `/v1/creditor/credit-limits/${body.creditLimit.creditLimitId}` })
  t.same(one.json(), body)
})

t.test('the debtor must be an active profile of the creditor; bodies are checked', async (t) => {
  const { svc, call } = await setup(t)
  const post = (payload: object) => call({ method: 'POST', url: '/v1/creditor/credit-limits', payload })
  const valid = { maxAmount: '100', currency: 'COP', expirationDate: '2026-12-31' }
  const other = await createOrganization(svc, 'Other lender')
  const foreign = await createProfile(svc, other.id, { natural: ana })
  const unknown = await post({ ...valid, debtorId: newId() })
  t.equal(unknown.statusCode, 400)
  t.equal(unknown.json().data.errors[0].field, 'body.debtorId')
  t.equal((await post({ ...valid, debtorId: foreign })).statusCode, 400, 'another organization\'s profile is no debtor of this creditor')
  const gone = await createProfile(svc, svc.organizationId, { natural: ana })
  await svc.runtime.execute(profileAggregate, gone, { type: 'DeactivateProfile', reason: 'duplicate', now: '2026-01-15T12:00:00.000Z' },
    { organizationId: svc.organizationId, actorId: 'test', correlationId: newId() })
  t.equal((await post({ ...valid, debtorId: gone })).statusCode, 409)
  const debtorId = await createProfile(svc, svc.organizationId, { legal: andes })
  const refuse = async (change: object, field: string) => {
    const response = await post({ ...valid, debtorId, ...change })
    t.equal(response.statusCode, 400, JSON.stringify(change))
    t.ok(response.json().data.errors.some((e: { field: string }) => e.field === field), field)
  }
  await refuse({ maxAmount: '0' }, 'body.maxAmount')
  await refuse({ maxAmount: '-5' }, 'body.maxAmount')
  await refuse({ maxAmount: '1.005' }, 'body.maxAmount')
  await refuse({ currency: 'cop' }, 'body.currency')
  await refuse({ currency: 'ABC' }, 'body.currency')
  await refuse({ expirationDate: '31/12/2026' }, 'body.expirationDate')
  await refuse({ expirationDate: '2026-02-30' }, 'body.expirationDate')
  await refuse({ expirationDate: '2026-01-14' }, 'body.expirationDate')
  await refuse({ expirationDate: '2026-12-31T00:00:00Z' }, 'body.expirationDate')
  t.equal((await post({ ...valid, debtorId, expirationDate: '2026-01-15' })).statusCode, 201, 'today is a valid expiration date')
})

t.test('the list: status filter, limit and offset bounds, pagination and the summary over every match', async (t) => {
  const { svc, call, setLimit, clock } = await setup(t)
  const amounts = ['1000000.00', '2500000.50', '300000', '4000000', '750000.25']
  const ids: string[] = []
  for (const [i, maxAmount] of amounts.entries()) {
    const debtor = await createProfile(svc, svc.organizationId, { natural: { ...ana, documentNumber: String(i) } })
    ids.push(await setLimit(debtor, { maxAmount }))
    clock.advance(1000)
  }
  await call({ method: 'PATCH', url: `/v1/creditor/credit-limits/${ids[1]}`, payload: { status: 'inactive' } })
  const list = async (query: string) => (await call({ method: 'GET', url: `/v1/creditor/credit-limits${query}` })).json()
  const all = await list('')
  t.same(all.creditLimits.map((l: { creditLimitId: string }) => l.creditLimitId), ids, 'oldest first')
  // 1 000 000 + 2 500 000.50 + 300 000 + 4 000 000 + 750 000.25
  t.same(all.summary, { totalLimits: 5, totalMaxAmount: '8550000.75', totalUsedAmount: '0.00', totalAvailableAmount: '8550000.75' })
  t.same(all.pagination, { total: 5, limit: 20, offset: 0, hasMore: false })
  const page = await list('?limit=2&offset=2')
  t.same(page.creditLimits.map((l: { creditLimitId: string }) => l.creditLimitId), ids.slice(2, 4))
  t.same(page.pagination, { total: 5, limit: 2, offset: 2, hasMore: true })
  t.equal(page.summary.totalLimits, 5, 'the summary covers every match, not only the page')
  t.same((await list('?limit=2&offset=4')).pagination, { total: 5, limit: 2, offset: 4, hasMore: false })
  const beyond = await list('?offset=5')
  t.same([beyond.creditLimits, beyond.pagination.hasMore, beyond.summary.totalLimits], [[], false, 5])
  t.equal((await list('?limit=1')).creditLimits.length, 1)
  t.equal((await list('?limit=100')).creditLimits.length, 5)
  const inactive = await list('?status=inactive')
  t.same([inactive.creditLimits.map((l: { creditLimitId: string }) => l.creditLimitId), inactive.summary.totalMaxAmount], [[ids[1]], '2500000.50'])
  t.equal((await list('?status=active')).summary.totalMaxAmount, '6050000.25')
  t.same((await list('?status=expired')).summary, { totalLimits: 0, totalMaxAmount: '0', totalUsedAmount: '0', totalAvailableAmount: '0' })
  t.equal((await list('?currency=USD')).pagination.total, 0)
  t.equal((await list(`?debtorId=${all.creditLimits[0].debtorInfo.debtorId}`)).pagination.total, 1)
  for (const bad of ['?limit=0', '?limit=101', '?offset=-1', '?limit=1.5', '?status=paused', '?status=ACTIVE', '?page=1', '?currency=usd']) {
    const response = await call({ method: 'GET', url: `/v1/creditor/credit-limits${bad}` })
    t.equal(response.statusCode, 400, `${bad} refused`)
  }
})

t.test('changes: amount, expiration, status; the debtor\'s name follows the profile', async (t) => {
  const { svc, call, setLimit } = await setup(t)
  const debtorId = await createProfile(svc, svc.organizationId, { natural: ana })
  const id = await setLimit(debtorId)
  const patch = (payload: object) => call({ method: 'PATCH', url: `/v1/creditor/credit-limits/${id}`, payload })
  const changed = await patch({ maxAmount: '7500000.5', expirationDate: '2027-03-31', status: 'inactive' })
  t.equal(changed.statusCode, 200)
  t.match(changed.json().creditLimit, { maxAmount: '7500000.50', availableAmount: '7500000.50', expirationDate: '2027-03-31', status: 'inactive' })
  t.equal((await patch({ status: 'active' })).json().creditLimit.status, 'active')
  t.equal((await patch({})).statusCode, 400)
  t.equal((await patch({ status: 'expired' })).statusCode, 400, 'expiry is the job\'s')
  t.equal((await patch({ expirationDate: '2026-01-01' })).statusCode, 400)
  t.equal((await call({ method: 'PATCH', url: `/v1/creditor/credit-limits/${newId()}`, payload: { status: 'active' } })).statusCode, 404)
  await svc.runtime.execute(profileAggregate, debtorId, { type: 'UpdateProfile', natural: { secondLastName: 'Díaz', documentNumber: '999' }, now: '2026-01-16T00:00:00.000Z' },
    { organizationId: svc.organizationId, actorId: 'test', correlationId: newId() })
  const after = (await call({ method: 'GET', url: `/v1/creditor/credit-limits/${id}` })).json().creditLimit
  t.same(after.debtorInfo, { debtorId, name: 'Ana María Gómez Díaz', documentType: 'CC', documentNumber: '999' })
})

t.test('the expiry job moves limits past their date to expired, as an event, and a new date renews them', async (t) => {
  const { svc, call, setLimit, clock } = await setup(t)
  const soon = await setLimit(await createProfile(svc, svc.organizationId, { natural: ana }), { expirationDate: '2026-01-20' })
  const inactive = await setLimit(await createProfile(svc, svc.organizationId, { legal: andes }), { expirationDate: '2026-01-20' })
  await call({ method: 'PATCH', url: `/v1/creditor/credit-limits/${inactive}`, payload: { status: 'inactive' } })
  const later = await setLimit(await createProfile(svc, svc.organizationId, { natural: { ...ana, documentNumber: '7' } }), { expirationDate: '2026-01-21' })
  const statuses = async () => Object.fromEntries((await call({ method: 'GET', url: '/v1/creditor/credit-limits' })).json().creditLimits
    .map((l: { creditLimitId: string; status: string }) => [l.creditLimitId, l.status]))

  clock.set('2026-01-20T23:59:59.999Z')
  await svc.runtime.scheduler.runNow('creditLimitExpiry')
  t.same(await statuses(), { [soon]: 'active', [inactive]: 'inactive', [later]: 'active' }, 'valid through the expiration date')
  clock.set('2026-01-21T00:05:00.000Z')
  await svc.runtime.scheduler.runNow('creditLimitExpiry')
  t.same(await statuses(), { [soon]: 'expired', [inactive]: 'expired', [later]: 'active' })
  await svc.runtime.scheduler.runNow('creditLimitExpiry')
  const history = []
  for await (const event of svc.runtime.history(`creditLimit-${soon}`)) history.push(event.type)
  t.same(history, ['CreditLimitCreated', 'CreditLimitExpired'], 'one event, however often the job runs')
  t.equal((await call({ method: 'GET', url: '/v1/creditor/credit-limits?status=expired' })).json().pagination.total, 2)

  const revive = await call({ method: 'PATCH', url: `/v1/creditor/credit-limits/${soon}`, payload: { status: 'active' } })
  t.equal(revive.statusCode, 409)
  t.equal(revive.json().data.code, 'INVALID_TRANSITION')
  const renewed = await call({ method: 'PATCH', url: `/v1/creditor/credit-limits/${soon}`, payload: { expirationDate: '2026-07-31' } })
  t.match(renewed.json().creditLimit, { status: 'active', expirationDate: '2026-07-31' })
})

t.test('a creditor sees only its own limits', async (t) => {
  const { svc, call, setLimit } = await setup(t)
  const other = await createOrganization(svc, 'Other lender')
  const foreign = await setLimit(await createProfile(svc, other.id, { natural: ana }), {}, other.id)
  const own = await setLimit(await createProfile(svc, svc.organizationId, { natural: ana }))
  const mine = (await call({ method: 'GET', url: '/v1/creditor/credit-limits' })).json()
  t.same([mine.creditorId, mine.creditLimits.map((l: { creditLimitId: string }) => l.creditLimitId)], [svc.organizationId, [own]])
  t.equal((await call({ method: 'GET', url: `/v1/creditor/credit-limits/${foreign}` })).statusCode, 404)
  t.equal((await call({ method: 'PATCH', url: `/v1/creditor/credit-limits/${foreign}`, payload: { status: 'inactive' } })).statusCode, 404)
  const analyst = await memberToken(svc, svc.organizationId, 'analyst')
  t.equal((await call({ method: 'GET', url: '/v1/creditor/credit-limits', token: analyst })).statusCode, 200)
  t.equal((await call({ method: 'PATCH', url: `/v1/creditor/credit-limits/${own}`, token: analyst, payload: { status: 'inactive' } })).statusCode, 403)
  const outsider = await memberToken(svc, other.id, 'administrator')
  t.equal((await call({ method: 'GET', url: '/v1/creditor/credit-limits', token: outsider })).statusCode, 403)
})

import t from 'tap'
import { createTestApp } from '../helpers/app.js'
import { createDebtor, createOrganization, lending, memberToken } from '../helpers/lending.js'
import { oneCreatedOthersReturned, refusesMalformedKeys } from '../helpers/idempotency.js'

t.test('a credit request with an Idempotency-Key creates one credit, however often and however concurrently it is sent', async (t) => {
  const svc = await createTestApp(t)
  const l = await lending(svc)
  const creditLineId = await l.createLine()
  const debtorId = await createDebtor(svc.runtime, svc.organizationId)
  const post = (key: string | undefined, body: Record<string, unknown>, organizationId = svc.organizationId, token = svc.adminToken) => svc.call({
    method: 'POST', url: '/v1/credits', token, organizationId, payload: body, ...(key === undefined ? {} : { headers: { 'idempotency-key': key } }),
  })
  const count = async () => (await l.call('GET', '/v1/credits')).json().pagination.total_items

  const first = await post('order-2026-0001', { creditLineId, debtorId, principal: '1000000' })
  t.equal(first.statusCode, 201)
  const credit = first.json().data.credit
  const again = await post('order-2026-0001', { creditLineId, debtorId, principal: '1000000.00' })
  t.equal(again.statusCode, 200, 'the same request again, the principal compared as an amount')
  t.same(again.json().data.credit, credit)
  t.equal(await count(), 1)

  const reused = await post('order-2026-0001', { creditLineId, debtorId, principal: '2000000' })
  t.equal(reused.statusCode, 409)
  t.same(reused.json().data, {
    code: 'IDEMPOTENCY_KEY_REUSED', message: 'this Idempotency-Key was already used for a different credit request', key: 'order-2026-0001', creditId: credit.ID,
  })
  t.equal((await post('order-2026-0001', { creditLineId, debtorId, principal: '1000000', term: 12 })).statusCode, 409, 'a default named is another request')

  t.equal((await l.call('POST', `/v1/credits/${credit.ID}/approve`)).statusCode, 200)
  const afterApproval = await post('order-2026-0001', { creditLineId, debtorId, principal: '1000000' })
  t.equal(afterApproval.statusCode, 200)
  t.equal(afterApproval.json().data.credit.state, 'Aprobado', 'the credit as it is now')

  const racing = await Promise.all(Array.from({ length: 12 }, () => post('order-2026-0002', { creditLineId, debtorId })))
  oneCreatedOthersReturned(t, racing)
  t.equal(new Set(racing.map((r) => r.json().data.credit.ID)).size, 1)
  t.equal(await count(), 2, 'twelve concurrent sends, one credit')

  const colleague = await post('order-2026-0002', { creditLineId, debtorId }, svc.organizationId, await memberToken(svc, svc.organizationId))
  t.equal(colleague.statusCode, 200, 'a Key is the organization\'s, whoever sends it')
  const other = await createOrganization(svc, 'Otra')
  const theirs = await post('order-2026-0002', {
    creditLineId: await lending(svc, other).then((o) => o.createLine()), debtorId: await createDebtor(svc.runtime, other),
  }, other, await memberToken(svc, other))
  t.equal(theirs.statusCode, 201, 'another organization\'s Key is its own')

  const plain = await Promise.all([post(undefined, { creditLineId, debtorId }), post(undefined, { creditLineId, debtorId })])
  t.same(plain.map((r) => r.statusCode), [201, 201], 'without a Key every request is a new credit')
  t.equal(await count(), 4)
  await refusesMalformedKeys(t, (key) => post(key, { creditLineId, debtorId }))
  const refused = await post('order-2026-0003', { creditLineId, debtorId, principal: '1' })
  t.equal(refused.statusCode, 400, 'a refused request creates nothing')
  t.equal((await post('order-2026-0003', { creditLineId, debtorId })).statusCode, 201, 'so its Key is still free')
})

import t from 'tap'
import { loadDemo } from '../../src/demo/index.js'
import { createTestApp } from '../helpers/app.js'
import { createDebtor, lending, lineBody } from '../helpers/lending.js'

/** Fields that are counts, terms, positions or durations: the only numbers allowed on the wire. */
const integerFields = new Set([
  'term', 'timeMin', 'timeMax', 'timeDefault', 'availableDays', 'number', 'InstallmentNumber', 'installmentNumber', 'RetryCount', 'processingTime',
  'installmentsPaid', 'installmentsCount', 'daysPastDue', 'revision', 'position', 'schemaVersion', 'current_page', 'total_pages', 'total_items',
  'items_per_page', 'from', 'limit', 'next', 'months', 'days',
])

const moneyFields = /^(principal.*|interest|amount|Amount|CollectionCosts|originalAmount|exchangeRate|rate|monthlyRate|.*(Amount|Total|Principal|Interest)|outstanding|unapplied|paid.*|installmentAmount|totalInterest|totalAmount)$/

const numbersIn = (value: unknown, path: string, out: Array<[string, number]>): void => {
  if (typeof value === 'number') out.push([path, value])
  else if (Array.isArray(value)) value.forEach((v, i) => numbersIn(v, `${path}[${i}]`, out))
  else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) numbersIn(v, `${path}.${k}`, out)
}

const moneyIn = (value: unknown, path: string, out: Array<[string, unknown]>): void => {
  if (Array.isArray(value)) value.forEach((v, i) => moneyIn(v, `${path}[${i}]`, out))
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (moneyFields.test(k) && typeof v !== 'object' && typeof v !== 'boolean' && k !== 'paidAt' && k !== 'paidInFull') out.push([`${path}.${k}`, v])
      moneyIn(v, `${path}.${k}`, out)
    }
  }
}

t.test('money is never a JSON number anywhere on the wire: every amount is a decimal string, every number a whole count', async (t) => {
  const svc = await createTestApp(t, { config: { processesEnabled: false } })
  const demo = await loadDemo(svc.runtime)
  await svc.runtime.settle(await svc.runtime.eventStore.headPosition())
  const get = async (url: string, token: string | undefined = svc.adminToken) => {
    const response = await svc.call({ method: 'GET', url, token, organizationId: demo.organizationId })
    t.equal(response.statusCode, 200, url)
    return response.json()
  }
  const bodies: Array<[string, unknown]> = []
  const record = async (url: string, token?: string) => {
    const body = await get(url, token)
    bodies.push([url, body])
    return body
  }
  await record('/v1/products', undefined)
  await record('/v1/custom-products')
  await record('/v1/credit-lines')
  for (const key of ['consumo', 'capital-trabajo', 'dolares']) await record(`/v1/credit-lines/${demo.ids[`creditLine.${key}`]}`)
  // The public product shape exists for active lines only ('dolares' is inactive).
  for (const key of ['consumo', 'capital-trabajo']) await record(`/v1/products/${demo.ids[`creditLine.${key}`]}`, undefined)
  const credits = (await record('/v1/credits?limit=100')).data as Array<{ ID: string }>
  for (const { ID } of credits) {
    const credit = (await record(`/v1/credits/${ID}`)).data.credit
    await record(`/v1/credits/${ID}?asOf=${new Date().toISOString()}`)
    await record(`/v1/credits/${ID}/installments`)
    await record(`/v1/credits/${ID}/events`)
    for (const installment of [...credit.installments.map((i: { ID: string }) => i.ID), 'zero']) {
      const orders = (await record(`/v1/payables/${ID}/installments/${installment}/orders`)).data as Array<{ ID: string }>
      for (const order of orders) await record(`/v1/payables/${ID}/installments/${installment}/orders/${order.ID}`)
    }
  }
  const numbers: Array<[string, number]> = []
  const amounts: Array<[string, unknown]> = []
  for (const [url, body] of bodies) {
    numbersIn(body, url, numbers)
    moneyIn(body, url, amounts)
  }
  t.ok(bodies.length > 60, `${bodies.length} responses checked`)
  t.ok(amounts.length > 1000, `${amounts.length} amounts checked`)
  t.same(numbers.filter(([path, value]) => !Number.isInteger(value) || !integerFields.has(path.split('.').pop()?.replace(/\[\d+\]$/, '') ?? '')), [],
    'no fractional numbers, and numbers only in count fields')
  t.same(amounts.filter(([, value]) => typeof value !== 'string' || !/^-?\d+(\.\d+)?$/.test(value)), [], 'every amount a plain decimal string')
})

t.test('every money input is below 10^15 with at most 4 decimals: beyond, 400 VALIDATION_ERROR naming the field', async (t) => {
  const svc = await createTestApp(t, { config: { processesEnabled: false } })
  const l = await lending(svc)
  const credit = await l.disbursedCredit()
  const creditLineId = await l.createLine()
  const debtorId = await createDebtor(svc.runtime, svc.organizationId)
  const orders = `/v1/payables/${credit.ID}/installments/${credit.installments[0]?.ID}/orders`
  const created = async (method: 'POST', url: string, body: object) => {
    const response = await l.call(method, url, body)
    t.equal(response.statusCode, 201, `${url} at the bound: ${response.body.slice(0, 200)}`)
    return response.json()
  }
  const LARGEST = '999999999999999.99'
  const limit = await created('POST', '/v1/creditor/credit-limits', { debtorId, maxAmount: LARGEST, currency: 'COP', expirationDate: '2099-01-01' })
  const tax = await created('POST', '/v1/taxes', { name: 'Timbre', percentage: 1, type: 'OTHER', applies_to: ['FEE'], minimum_amount: 999999999999999 })
  await created('POST', '/v1/credit-lines', lineBody({ principalMax: LARGEST }))
  const TOO_BIG = '1000000000000000'
  const cases: Array<['POST' | 'PATCH', string, object, string]> = [
    ['POST', '/v1/credit-lines', lineBody({ principalMax: TOO_BIG }), 'body.principalMax'],
    ['POST', '/v1/credit-lines', lineBody({ principalMin: '500000.00001' }), 'body.principalMin'],
    ['PATCH', `/v1/credit-lines/${creditLineId}`, { principalDefault: `${TOO_BIG}.00` }, 'body.principalDefault'],
    ['POST', '/v1/credits', { creditLineId, debtorId, principal: '123456789012345678901234567890123456789012345678.37' }, 'body.principal'],
    ['POST', orders, { Amount: TOO_BIG }, 'body.Amount'],
    ['POST', orders, { CollectionCosts: TOO_BIG }, 'body.CollectionCosts'],
    ['POST', '/v1/creditor/credit-limits', { debtorId, maxAmount: TOO_BIG, currency: 'USD', expirationDate: '2099-01-01' }, 'body.maxAmount'],
    ['PATCH', `/v1/creditor/credit-limits/${limit.creditLimit.creditLimitId}`, { maxAmount: TOO_BIG }, 'body.maxAmount'],
    ['POST', '/v1/taxes', { name: 'IVA', percentage: 19, type: 'VAT', applies_to: ['FEE'], minimum_amount: 1e15 }, 'body.minimum_amount'],
    ['PATCH', `/v1/taxes/${tax.data.id}`, { minimum_amount: 1e15 }, 'body.minimum_amount'],
  ]
  for (const [method, url, body, field] of cases) {
    const response = await l.call(method, url, body)
    t.equal(response.statusCode, 400, `${method} ${url} ${field}`)
    t.match(response.json().data, { code: 'VALIDATION_ERROR', errors: [{ field }] }, `${method} ${url} names ${field}`)
  }
})

import t from 'tap'
import { exportTypeInfo, exportTypes, type ExportType } from '../../src/exports/catalogue.js'
import { ManualClock } from '../../src/shared/clock.js'
import { createTestApp } from '../helpers/app.js'
import { postExport } from '../helpers/exports.js'

const NOW = '2026-01-15T12:00:00.000Z'
const FUTURE = '2026-12-31T00:00:00Z'

/** The types that show credits as they stood at `before`: a later `before` than the request would invent arrears. */
const asItStood: readonly ExportType[] = [
  'credit-bureau-a', 'credit-bureau-b', 'ledger-a-individual', 'ledger-a-clients', 'receivables-cutoff', 'installments-cutoff', 'debtors-credit-active',
  'debtors-credit-active-invoicing-a',
]

const extraFields = (type: ExportType): Record<string, unknown> => {
  if (type === 'csv-a') return { typeFile: 'credits' }
  if (type === 'reports') return { columns: ['credits.id'] }
  return {}
}

t.test('a period end or cut-off later than the request is refused for the types that report as it stood then, on the jobs API and the legacy routes', async (t) => {
  const svc = await createTestApp(t, { clock: new ManualClock(NOW), config: { processesEnabled: false } })
  for (const type of exportTypes) {
    const refused = asItStood.includes(type)
    const created = await postExport(svc, { type, ...extraFields(type), before: FUTURE })
    if (refused) {
      t.equal(created.statusCode, 400, `${type}: refused`)
      t.match(created.json().data, { code: 'BIND_ERROR', errors: [{ field: 'body.before', message: /^must not be later than the moment of the request/ }] }, type)
    } else {
      t.equal(created.statusCode, 202, `${type}: rows by event time, or as held now: a future end is only a period not over yet`)
    }
    const path = exportTypeInfo[type].legacyPath
    if (path === null) continue
    const query = new URLSearchParams({ ...(type === 'csv-a' ? { typeFile: 'credits' } : {}), before: FUTURE })
    const legacy = await svc.call({ method: 'GET', url: `/v1${path}?${query}`, token: svc.adminToken, organizationId: svc.organizationId })
    t.equal(legacy.statusCode, refused ? 400 : 200, `GET ${path}`)
    if (refused) t.match(legacy.json().data, { code: 'BIND_ERROR', errors: [{ field: 'query.before' }] }, `GET ${path}`)
  }
})

t.test('a period end or cut-off at the very moment of the request is accepted', async (t) => {
  const svc = await createTestApp(t, { clock: new ManualClock(NOW), config: { processesEnabled: false } })
  for (const type of asItStood) t.equal((await postExport(svc, { type, before: NOW })).statusCode, 202, type)
  const earlier = await postExport(svc, { type: 'receivables-cutoff', before: '2026-01-15T07:00:00.001-05:00' })
  t.equal(earlier.statusCode, 400, 'a millisecond later, written in another offset, is refused')
})

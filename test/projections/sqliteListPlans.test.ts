import t, { type Test } from 'tap'
import { creditLineQueries, creditLinesProjection } from '../../src/projections/creditLines.js'
import { creditQueries, creditsProjection } from '../../src/projections/credits.js'
import { exportJobQueries, exportJobsProjection } from '../../src/projections/exports.js'
import { organizationQueries, organizationsProjection } from '../../src/projections/organizations.js'
import { paymentOrderQueries, paymentOrdersProjection } from '../../src/projections/paymentOrders.js'
import { profileQueries, profilesProjection } from '../../src/projections/profiles.js'
import type { Projection } from '../../src/projections/projection.js'
import type { CollectionSpec, Filter, FindOptions, ReadCollection, ReadDocument, ReadStore } from '../../src/projections/readStore.js'
import { signatureQueries, signaturesProjection } from '../../src/projections/signatures.js'
import { SqliteReadStore } from '../../src/projections/sqliteStore.js'
import { webhookSendQueries, webhookSendsProjection } from '../../src/projections/webhookSends.js'

// The paginated lists of collections that grow with an organization's business, on the SQLite read store (what
// READ_STORE=sqlite deployments read, and the same index specs MongoDB builds): each page and each total must come
// from an index, in the list's order, rather than SQLite (or JavaScript) sorting or counting every match per request.

const DOCS = 1500

interface Call {
  spec: CollectionSpec
  kind: 'find' | 'count'
  filter: Filter
  options?: FindOptions
}

/** The store the query functions are given: every find and count they make is recorded, then run. */
const recording = (store: ReadStore, calls: Call[]): ReadStore => new Proxy(store, {
  get: (target, property, receiver) => {
    if (property !== 'collection') return Reflect.get(target, property, receiver)
    return <T extends ReadDocument>(spec: CollectionSpec | string): ReadCollection<T> => {
      const collection = target.collection<T>(spec)
      const full = typeof spec === 'string' ? { name: spec } : spec
      return new Proxy(collection, {
        get: (inner, name, innerReceiver) => {
          if (name === 'find') return (filter: Filter, options?: FindOptions) => { calls.push({ spec: full, kind: 'find', filter, ...(options === undefined ? {} : { options }) }); return inner.find(filter, options) }
          if (name === 'count') return (filter: Filter) => { calls.push({ spec: full, kind: 'count', filter }); return inner.count(filter) }
          return Reflect.get(inner, name, innerReceiver)
        },
      })
    }
  },
})

const seed = async (store: ReadStore, projection: Projection, name: string, make: (i: number) => ReadDocument) => {
  const spec = projection.collections.find((c) => c.name === name)
  if (spec === undefined) throw new Error(`${projection.name} has no collection ${name}`)
  const docs = store.collection(spec)
  for (let i = 0; i < DOCS; i++) await docs.put(make(i))
}

const at = (i: number) => new Date(Date.parse('2026-01-01T00:00:00.000Z') + i * 60_000).toISOString()
const org = (i: number) => (i % 10 === 9 ? 'org-other' : 'org')

/** Whether a plan reads through an index without sorting what it reads. */
/** Whether a plan reads its table through an index (never a scan of every row) without sorting what it reads. */
const onIndex = (steps: readonly string[]) =>
  steps.some((step) => /USING (COVERING )?INDEX|USING INTEGER PRIMARY KEY/.test(step)) &&
  !steps.some((step) => /^SCAN c_\S+$/.test(step) || step.includes('TEMP B-TREE'))

const checkCalls = (t: Test, store: SqliteReadStore, calls: readonly Call[], what: string) => {
  t.ok(calls.length > 0, `${what}: the list queried its collection`)
  for (const call of calls) {
    const how = store.explainQuery(call.spec, call.filter, call.options)
    const label = `${what}: ${call.kind} ${JSON.stringify(call.filter)}`
    t.ok(how.exact && !how.sortedInJavaScript, `${label} goes to SQL whole`)
    const steps = call.kind === 'find' ? how.find : how.count
    t.ok(onIndex(steps), `${label} reads an index in its order (${steps.join('; ')})`)
  }
}

t.test('every page and total of the large lists is read from an index on the SQLite read store', async (t) => {
  const store = new SqliteReadStore({ file: ':memory:' })
  t.teardown(() => store.close())
  await seed(store, creditsProjection, 'credits', (i) => ({
    _id: `c${i}`, organizationId: org(i), requestedAt: at(i), status: ['Pagado', 'Desembolsado', 'Aprobado'][i % 3], debtorId: `d${i % 300}`, creditLineId: `l${i % 4}`,
  }))
  await seed(store, profilesProjection, 'profiles', (i) => ({
    _id: `p${i}`, organizationId: org(i), createdAt: at(i), type: i % 4 === 0 ? 'legal' : 'natural', ownerId: `u${i % 20}`, active: i % 7 !== 0,
    sharedWith: i % 5 === 0 ? [`u${(i + 1) % 20}`, `u${(i + 2) % 20}`] : [],
  }))
  await seed(store, creditLinesProjection, 'credit_lines', (i) => ({
    _id: `l${i}`, organizationId: `org${i % 40}`, organizationActive: i % 13 !== 0, active: i % 3 !== 0, currency: 'COP', createdAt: at(i),
  }))
  await seed(store, paymentOrdersProjection, 'payment_orders', (i) => ({
    _id: `o${i}`, organizationId: org(i), creditId: `c${i % 100}`, installmentId: `i${i % 300}`, createdAt: at(i), status: 'completed',
  }))
  await seed(store, webhookSendsProjection, 'webhook_sends', (i) => ({ _id: `s${i}`, organizationId: org(i), webhookId: `w${i % 3}`, startedAt: at(i), status: 'succeeded' }))
  await seed(store, exportJobsProjection, 'export_jobs', (i) => ({ _id: `e${i}`, organizationId: org(i), exportType: ['credits', 'installments', 'reports'][i % 3], requestedAt: at(i), status: 'completed' }))
  await seed(store, signaturesProjection, 'signatures', (i) => ({ _id: `g${i}`, organizationId: org(i), documentId: `doc${i % 50}`, createdAt: at(i) }))
  await seed(store, organizationsProjection, 'organizations', (i) => ({ _id: `org${i}`, name: `Organization ${i}`, createdAt: at(i) }))

  const lists: Array<[string, (store: ReadStore) => Promise<unknown>]> = [
    ['credits', (s) => creditQueries(s).list({ organizationId: 'org', offset: 0, limit: 50 })],
    ['credits deep', (s) => creditQueries(s).list({ organizationId: 'org', offset: 1000, limit: 50 })],
    ['credits by state', (s) => creditQueries(s).list({ organizationId: 'org', state: 'Pagado', offset: 0, limit: 50 })],
    ['credits of a debtor', (s) => creditQueries(s).list({ organizationId: 'org', debtorId: 'd7', offset: 0, limit: 50 })],
    ['credits of a line', (s) => creditQueries(s).list({ organizationId: 'org', creditLineId: 'l2', offset: 0, limit: 50 })],
    ['profiles, the viewer\'s own', (s) => profileQueries(s).list({ organizationId: 'org', viewerId: 'u3', administrator: false, includeShared: false, offset: 0, limit: 50 })],
    ['an installment\'s payment orders', (s) => paymentOrderQueries(s).listForInstallment({ organizationId: 'org', creditId: 'c7', installmentId: 'i7', offset: 0, limit: 50 })],
    ['a webhook\'s sends', (s) => webhookSendQueries(s).byWebhook('w1', { organizationId: 'org', offset: 0, limit: 50 })],
    ['export jobs', (s) => exportJobQueries(s).list({ organizationId: 'org', types: ['credits', 'installments', 'reports'], offset: 0, limit: 50 })],
    ['a document\'s signatures', (s) => signatureQueries(s).listOfDocument('org', 'doc7', { offset: 0, limit: 50 })],
    ['organizations', (s) => organizationQueries(s).list({ offset: 200, limit: 50 })],
  ]
  for (const [what, list] of lists) {
    const calls: Call[] = []
    await list(recording(store, calls))
    checkCalls(t, store, calls, what)
  }

  const more: Array<[string, (store: ReadStore) => Promise<unknown>]> = [
    ['profiles, an administrator', (s) => profileQueries(s).list({ organizationId: 'org', viewerId: 'u3', administrator: true, includeShared: false, offset: 0, limit: 50 })],
    ['active profiles, an administrator', (s) => profileQueries(s).list({ organizationId: 'org', viewerId: 'u3', administrator: true, includeShared: false, active: true, offset: 0, limit: 50 })],
    ['active profiles, the viewer\'s own', (s) => profileQueries(s).list({ organizationId: 'org', viewerId: 'u3', administrator: false, includeShared: false, active: true, offset: 0, limit: 50 })],
    ['profiles, the viewer\'s own and those shared with them', (s) => profileQueries(s).list({ organizationId: 'org', viewerId: 'u3', administrator: false, includeShared: true, offset: 0, limit: 50 })],
    ['an organization\'s active credit lines', (s) => creditLineQueries(s).list({ organizationId: 'org7', active: true, offset: 0, limit: 50 })],
    ['the marketplace\'s credit lines', (s) => creditLineQueries(s).list({ active: true, offset: 0, limit: 50 })],
  ]
  for (const [what, list] of more) {
    const calls: Call[] = []
    await list(recording(store, calls))
    checkCalls(t, store, calls, what)
  }
})

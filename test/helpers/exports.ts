import { firstValueFrom, filter, type Subscription } from 'rxjs'
import type { Runtime } from '../../src/runtime.js'
import { defineBlobProducer, type BlobKind } from '../../src/exports/blobs.js'
import type { ExportType } from '../../src/exports/catalogue.js'
import type { Column } from '../../src/exports/csv.js'
import { defineDataSet, type DataSet } from '../../src/exports/dataSets.js'
import type { ReportSource } from '../../src/exports/reportSources.js'
import type { ExportJobDoc } from '../../src/projections/exports.js'
import type { Permission } from '../../src/shared/permissions.js'
import type { TestApp } from './app.js'
import { createOrganization as newOrganization, memberToken as memberOf } from './organizations.js'

/**
 * Test data sets: the framework is exercised with rows made up here, since
 * the product's data sets (built over the credit read models) register
 * themselves separately. Row i is due on day i of 2026 and created at noon.
 */
export interface FixtureRow {
  id: string
  amount: string
  dueDate: string
  note: string | null
  createdAt: string
  paid: boolean
}

export const fixtureColumns: readonly Column<FixtureRow>[] = [
  { name: 'id', format: 'text', description: 'row id', value: (r) => r.id },
  { name: 'amount', format: 'decimal', scale: 2, description: 'an amount', value: (r) => r.amount },
  { name: 'due_date', format: 'date', description: 'a date', value: (r) => r.dueDate },
  { name: 'note', format: 'text', description: 'free text', value: (r) => r.note },
  { name: 'created_at', format: 'timestamp', description: 'a timestamp', value: (r) => r.createdAt },
  { name: 'paid', format: 'boolean', description: 'a flag', value: (r) => r.paid },
]

const notes = ['plain', 'comma, inside', 'quote " inside', 'line\r\nbreak', 'ñandú €', '=SUM(A1)', null]

export const fixtureRow = (i: number, organizationId: string): FixtureRow => {
  const day = new Date(Date.UTC(2026, 0, 1 + i))
  return {
    id: `${organizationId.slice(-8)}-${i}`,
    amount: `${1000 + i}.5`,
    dueDate: day.toISOString().slice(0, 10),
    note: notes[i % notes.length] ?? null,
    createdAt: new Date(day.getTime() + 12 * 3_600_000).toISOString(),
    paid: i % 2 === 0,
  }
}

/** Rows 0..size-1 whose createdAt lies in [after, before). */
export const fixtureDataSet = (type: ExportType, size: number, options: { countable?: boolean } = {}): DataSet => {
  const inPeriod = (row: FixtureRow, after?: string, before?: string) =>
    (after === undefined || row.createdAt >= new Date(after).toISOString()) && (before === undefined || row.createdAt < new Date(before).toISOString())
  const period = (body: object): { after?: string; before?: string } => ({
    ...('after' in body && typeof body.after === 'string' ? { after: body.after } : {}),
    ...('before' in body && typeof body.before === 'string' ? { before: body.before } : {}),
  })
  return defineDataSet({
    type,
    description: `test rows for ${type}`,
    columns: fixtureColumns,
    async *rows(body, context) {
      const { after, before } = period(body)
      for (let i = 0; i < size; i++) {
        const row = fixtureRow(i, context.organizationId)
        if (inPeriod(row, after, before)) yield row
      }
    },
    ...(options.countable === false ? {} : {
      async count(body, context) {
        const { after, before } = period(body)
        let n = 0
        for (let i = 0; i < size; i++) if (inPeriod(fixtureRow(i, context.organizationId), after, before)) n += 1
        return n
      },
    }),
  })
}

/** A data set whose rows never come: the job stays running until its signal aborts. */
export const blockingDataSet = (type: ExportType, started?: () => void): DataSet => defineDataSet({
  type,
  description: 'never finishes',
  columns: fixtureColumns,
  async *rows(_body, context) {
    started?.()
    await new Promise<void>((resolve) => context.signal.addEventListener('abort', () => resolve(), { once: true }))
    context.signal.throwIfAborted()
  },
})

/** A data set that yields a value its column cannot write. */
export const brokenDataSet = (type: ExportType): DataSet => defineDataSet({
  type,
  description: 'writes a float into a decimal column',
  columns: [{ name: 'amount', format: 'decimal', description: 'amount', value: (r: { amount: number }) => r.amount }],
  async *rows() {
    yield { amount: 0.1 }
  },
})

export const creditsSource: ReportSource = {
  name: 'credits',
  description: 'test credits',
  columns: [
    { name: 'id', type: 'string', description: 'credit id' },
    { name: 'principal', type: 'decimal', description: 'principal' },
    { name: 'dueDate', type: 'date', description: 'first due date' },
  ],
}

/** `reports` over the test source: the chosen columns of `size` credits. */
export const reportsDataSet = (size: number): DataSet => defineDataSet({
  type: 'reports',
  description: 'test report',
  columns: (body) => body.columns.map((qualified): Column<FixtureRow> => {
    const column = qualified.split('.')[1]
    if (column === 'principal') return { name: qualified, format: 'decimal', description: qualified, value: (r) => r.amount }
    if (column === 'dueDate') return { name: qualified, format: 'date', description: qualified, value: (r) => r.dueDate }
    return { name: qualified, format: 'text', description: qualified, value: (r) => r.id }
  }),
  async *rows(_body, context) {
    for (let i = 0; i < size; i++) yield fixtureRow(i, context.organizationId)
  },
  async count() {
    return size
  },
})

export const fixtureBlobProducer = (kind: BlobKind) => defineBlobProducer<{ organizationId: string; period: string }>({
  kind,
  description: `test ${kind} blob`,
  columns: [
    { name: 'organization', format: 'text', description: 'organization', value: (r) => r.organizationId },
    { name: 'period', format: 'text', description: 'period', value: (r) => r.period },
  ],
  async *rows(context) {
    yield { organizationId: context.organizationId, period: context.period.label }
  },
})

const isFinal = (doc: ExportJobDoc | null) => doc !== null && (doc.status === 'done' || doc.status === 'failed')

/** Resolves with the job once it is done or failed (driven by the live hub, no polling). */
export const jobSettled = async (runtime: Runtime, orderId: string): Promise<ExportJobDoc> => {
  let subscription: Subscription | undefined
  const ended = new Promise<void>((resolve, reject) => {
    subscription = runtime.hub.events$.subscribe({
      next: (event) => {
        if ((event.type === 'ExportCompleted' || event.type === 'ExportFailed') && event.data.orderId === orderId) resolve()
      },
      complete: () => reject(new Error(`the service stopped before export ${orderId} ended`)),
    })
  })
  try {
    if (!isFinal(await runtime.queries.exportJobs.byId(orderId))) await ended
  } finally {
    subscription?.unsubscribe()
  }
  const doc = await runtime.queries.exportJobs.byId(orderId)
  if (doc === null) throw new Error(`no export ${orderId}`)
  return doc
}

/** Resolves once an event of the type about the job has been projected. */
export const jobEvent = (runtime: Runtime, orderId: string, type: string) =>
  firstValueFrom(runtime.hub.events$.pipe(filter((event) => event.type === type && 'orderId' in event.data && event.data.orderId === orderId)))

export const postExport = (svc: TestApp, body: object, options: { token?: string; organizationId?: string; url?: string } = {}) =>
  svc.call({
    method: 'POST', url: options.url ?? '/v1/exports', token: options.token ?? svc.adminToken, organizationId: options.organizationId ?? svc.organizationId,
    payload: body,
  })

/** A client of the organization whose role template grants exactly these permissions. */
export const memberToken = (svc: TestApp, organizationId: string, permissions: readonly Permission[]): Promise<string> =>
  memberOf(svc, organizationId, permissions)

export const createOrganization = async (svc: TestApp, name: string): Promise<string> => (await newOrganization(svc, name)).id

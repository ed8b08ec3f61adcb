import t from 'tap'
import { MemoryReadStore } from '../../src/projections/memoryStore.js'
import type { CollectionSpec } from '../../src/projections/readStore.js'

interface Loan { _id: string; organizationId: string; status: string; tags?: string[] }

const spec: CollectionSpec = { name: 'loans', indexes: [{ organizationId: 1 }, { status: 1 }, { tags: 1 }] }

const ids = async (iterable: AsyncIterable<Loan>, during: (doc: Loan) => Promise<void> = async () => {}) => {
  const seen: string[] = []
  for await (const doc of iterable) {
    seen.push(doc._id)
    await during(doc)
  }
  return seen
}

t.test('an indexed stream written to meanwhile reaches what is added, skips what is removed first, and repeats nothing', async (t) => {
  const loans = new MemoryReadStore().collection<Loan>(spec)
  for (const id of ['a', 'b', 'c', 'd', 'e']) await loans.put({ _id: id, organizationId: 'org', status: 'open' })
  const seen = await ids(loans.stream({ status: 'open' }), async (doc) => {
    if (doc._id === 'a') {
      await loans.delete('a')
      await loans.delete('b')
      await loans.put({ _id: 'f', organizationId: 'org', status: 'open' })
    }
    if (doc._id === 'c') {
      await loans.put({ _id: 'c', organizationId: 'org', status: 'closed' })
      await loans.put({ _id: 'd', organizationId: 'org', status: 'open' })
      await loans.delete('e')
      await loans.delete('f')
      await loans.put({ _id: 'g', organizationId: 'org', status: 'open' })
    }
  })
  t.same(seen, ['a', 'c', 'd', 'g'])
  t.same(await ids(loans.stream({ status: 'open' })), ['d', 'g'], 'in the order they took the value')
  t.same(await ids(loans.stream({ status: 'closed' })), ['c'])
  t.equal(await loans.count({ status: 'open' }), 2)
})

t.test('a document taking a value again goes to the end of that value, and array fields index every element once', async (t) => {
  const loans = new MemoryReadStore().collection<Loan>(spec)
  await loans.put({ _id: 'x', organizationId: 'org', status: 'open', tags: ['vip', 'vip', 'new'] })
  await loans.put({ _id: 'y', organizationId: 'org', status: 'open', tags: ['vip'] })
  await loans.put({ _id: 'x', organizationId: 'org', status: 'closed', tags: ['vip', 'vip', 'new'] })
  await loans.put({ _id: 'x', organizationId: 'org', status: 'open', tags: ['new'] })
  t.same(await ids(loans.stream({ status: 'open' })), ['y', 'x'])
  t.same(await ids(loans.stream({ tags: 'vip' })), ['y'])
  t.same(await ids(loans.stream({ tags: 'new' })), ['x'])
  t.same(await ids(loans.stream({ status: 'nope' })), [])
  await loans.delete('y')
  t.same(await ids(loans.stream({ organizationId: 'org' })), ['x'])
})

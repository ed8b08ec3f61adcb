import { Query } from 'mingo'
import t from 'tap'
import { documentMatcher } from '../../src/projections/documentQuery.js'
import { compileFilter } from '../../src/projections/memoryFilter.js'

/** Documents with missing, null, mistyped, array and nested values: where a shortcut could disagree with MongoDB's semantics. */
const docs: Array<Record<string, unknown>> = [
  {},
  { a: null },
  { a: 1, b: 'x', c: true },
  { a: 2, b: 'y', c: false, d: { e: '2026-01-02' } },
  { a: '2', b: 'z', d: { e: '2026-02-01' } },
  { a: [1, 3], b: ['x', 'w'] },
  { a: { nested: 1 }, d: [{ e: '2026-01-02' }] },
  { a: 3, b: 'x', d: null },
]

const filters: Array<Record<string, unknown>> = [
  { a: 1 }, { a: null }, { a: '2' }, { b: 'x' }, { c: false },
  { a: { $eq: 2 } }, { a: { $ne: 1 } }, { a: { $ne: null } }, { a: { $in: [1, 2] } }, { a: { $in: [null, 3] } }, { a: { $nin: [1, '2'] } },
  { a: { $gt: 1 } }, { a: { $gte: 1, $lt: 3 } }, { a: { $lte: '2' } }, { b: { $gt: 'x' } }, { a: { $exists: true } }, { a: { $exists: false } },
  { 'd.e': '2026-01-02' }, { 'd.e': { $gte: '2026-01-15' } }, { 'd.e': null },
  { $or: [{ a: 1 }, { b: 'z' }] }, { $and: [{ a: { $gte: 1 } }, { b: 'x' }] }, { $nor: [{ a: 1 }, { a: null }] },
  { a: 3, $or: [{ b: 'x' }, { c: true }] }, { b: 'x', a: { $in: [1, 3] } },
]

t.test('compiled filters select exactly what the full query engine selects', async (t) => {
  for (const filter of filters) {
    const predicate = compileFilter(filter)
    t.ok(predicate, `${JSON.stringify(filter)} compiles`)
    const query = new Query(filter)
    const fast = docs.map((doc) => predicate?.(doc) ?? query.test(doc))
    t.same(fast, docs.map((doc) => query.test(doc)), JSON.stringify(filter))
  }
})

t.test('filters beyond the compiled subset are left to the full engine', async (t) => {
  for (const filter of [{ a: { $regex: 'x' } }, { a: { $elemMatch: { $gt: 1 } } }, { a: { nested: 1 } }, { $where: 'true' }, { a: { $in: [{ x: 1 }] } }]) {
    t.equal(compileFilter(filter), null, JSON.stringify(filter))
  }
})

t.test('the matcher of plain equalities selects exactly what the full query engine selects', async (t) => {
  const equalities: Array<Record<string, unknown>> = [{ a: 1 }, { a: 3 }, { b: 'x' }, { c: false }, { a: 1, b: 'x' }, { a: 3, b: 'x' }, { b: 'w', a: 3 }, { a: '2', b: 'z' }]
  for (const filter of [...equalities, ...filters]) {
    const matches = documentMatcher(filter)
    const query = new Query(filter)
    t.same(docs.map((doc) => matches({ _id: 'd', ...doc })), docs.map((doc) => query.test({ _id: 'd', ...doc })), JSON.stringify(filter))
  }
})

import t from 'tap'
import { filterProblem, jsonPathMatches } from '../../src/webhooks/jsonPath.js'
import { jsonPathProblem, runResponseQueries } from '../../src/webhooks/responseQueries.js'
import type { IncomingResponse } from '../../src/webhooks/http.js'
import { extractToken } from '../../src/webhooks/token.js'

const answer = {
  items: [{ id: 'a1', status: 'ok', n: 3, tags: ['x'] }, { id: 'b2', status: 'failed', n: 7 }, { id: 'c3', status: 'ok', n: 9, owner: { name: 'Ana' } }],
  meta: { wanted: 'ok' },
}

t.test('filters that compare and combine the document\'s values work as before', async (t) => {
  t.same(jsonPathMatches('$.items[?(@.status == "ok")].id', answer), ['a1', 'c3'])
  t.same(jsonPathMatches('$.items[?(@.n > 2 && @.n <= 7)].id', answer), ['a1', 'b2'])
  t.same(jsonPathMatches('$.items[?(@.status === @root.meta.wanted)].id', answer), ['a1', 'c3'], '@root')
  t.same(jsonPathMatches('$.items[?(@.owner)].owner.name', answer), ['Ana'], 'presence')
  t.same(jsonPathMatches('$.items[?(!(@.status != "ok") || @.n * 2 === 14)].id', answer), ['a1', 'b2', 'c3'], 'not, arithmetic, or')
  t.same(jsonPathMatches('$.items[?(@.tags[?(@ == "x")])].id', answer), ['a1'], 'a nested filter')
  t.equal(filterProblem('$.items[?(@.tags[?(@ == "x")])].id'), null, 'accepted when saved too')
  t.same(jsonPathMatches('$.items[?(@.owner.name == "Ana")].id', answer), ['c3'], 'a filter failing on some elements (no owner) is no match for those only')
  t.same(jsonPathMatches('$.items[?(@.tags && @.tags.length > 0)].id', answer), ['a1'], 'a length read')
  t.same(jsonPathMatches('$.items[?(@.n > 5 ? @.status == "failed" : false)].id', answer), ['b2'], 'a conditional')
  t.same(jsonPathMatches('$.items[?(@property == 1)].id', answer), ['b2'], '@property')
  t.same(jsonPathMatches('$..name', answer), ['Ana'], 'no filter at all')
})

t.test('a filter that calls a function, uses a regular expression or assigns is refused, at save and when it runs', async (t) => {
  for (const [path, reason] of [
    ['$.items[?(/^(a+)+$/.test(@.id))]', /regular expression|calls a function/],
    ['$.items[?(@.id.repeat(10000000).indexOf("y") > 0)]', /calls a function/],
    ['$.items[?(@.status.toUpperCase() == "OK")]', /calls a function/],
    ['$.items[?(@.n = 1)]', /uses/],
    ['$.items[?([1, 2].length)]', /uses ArrayExpression/],
    ['$.items[?(process)]', /names process/],
    ['$.items[?(@.a, @.b)]', /uses/],
    ['$.items[?(@root.meta.wanted + @.id == "oka1")]', /uses the operator \+/],
    ['$.items[?(@.owner ?? @.n)]', /uses the operator \?\?/],
  ] as const) {
    t.match(filterProblem(path), reason, path)
    t.match(jsonPathProblem(path), /is refused: the filter/, `${path}: refused when saved`)
    t.throws(() => jsonPathMatches(path, answer), /the filter/, `${path}: refused when it runs (a webhook saved before the rule)`)
    t.same(runResponseQueries({ q: path }, JSON.stringify(answer)).results, { q: null }, `${path}: a response query gives null`)
  }
  t.equal(filterProblem('$.items[?(@.status == "ok")].id'), null)
  t.equal(jsonPathProblem('$.items[?(@.status == "ok")].id'), null)
})

t.test('a token path whose filter fails on the answer\'s values is a missing token, not a failure of the send', async (t) => {
  const rules = { tokenHeader: '', tokenSourceKey: '$.data[?(@.a.b)].token', tokenType: 'Bearer', authHeader: 'Authorization' }
  const response: IncomingResponse = { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ data: [{ q: 1 }] }), truncated: false }
  const outcome = extractToken(response, rules)
  t.match(outcome, { error: { code: 'TOKEN_NOT_FOUND' } })
  const found = extractToken({ ...response, body: JSON.stringify({ data: [{ a: { b: 1 }, token: 't-1' }] }) }, rules)
  t.same(found, { token: 't-1' })
})

t.test('a query has a time budget: filters over a large answer that would hold the event loop for seconds give no result', async (t) => {
  const long = 'a'.repeat(240_000)
  const body = { s: `${long}a`, t: `${long}b`, a: Array.from({ length: 50_000 }, () => 0) }
  t.throws(() => jsonPathMatches('$.a[?(@root.s < @root.t)]', body), /ran out of time/)
  const results = runResponseQueries({ slow: '$.a[?(@root.s < @root.t)]', quick: '$.a[1]' }, JSON.stringify(body))
  t.same(results.results, { slow: null, quick: 0 }, 'the slow one is null, the others are answered')
})

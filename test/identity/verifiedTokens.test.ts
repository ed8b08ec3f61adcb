import t from 'tap'
import { VerifiedTokens, windowOf } from '../../src/identity/verifiedTokens.js'

t.test('an entry answers inside its token\'s window only, and is dropped outside it', async (t) => {
  const tokens = new VerifiedTokens<{ id: string }>(10)
  const window = windowOf({ nbf: 100, exp: 200 })
  t.same(window, { notBefore: 100_000, expiresAt: 200_000 })
  if (window === null) return
  tokens.set('a', { id: 'a' }, window)
  t.equal(tokens.get('a', 99_999), undefined, 'before nbf')
  t.equal(tokens.size, 0, 'dropped: the next request verifies the token again')
  tokens.set('a', { id: 'a' }, window)
  t.same(tokens.get('a', 100_000), { id: 'a' })
  t.same(tokens.get('a', 200_000), { id: 'a' }, 'at exp itself, as fast-jwt has it')
  t.equal(tokens.get('a', 200_001), undefined)
  t.equal(tokens.size, 0)
})

t.test('a token without exp has no window; one without nbf is valid from the start', async (t) => {
  t.equal(windowOf({ nbf: 1 }), null)
  t.same(windowOf({ exp: 5 }), { notBefore: -Infinity, expiresAt: 5000 })
})

t.test('the least recently used token leaves first when the bound is reached', async (t) => {
  const tokens = new VerifiedTokens<{ id: string }>(2)
  const window = { notBefore: 0, expiresAt: 1000 }
  tokens.set('a', { id: 'a' }, window)
  tokens.set('b', { id: 'b' }, window)
  tokens.get('a', 1)
  tokens.set('c', { id: 'c' }, window)
  t.equal(tokens.size, 2)
  t.equal(tokens.get('b', 1), undefined)
  t.same([tokens.get('a', 1), tokens.get('c', 1)], [{ id: 'a' }, { id: 'c' }])
})

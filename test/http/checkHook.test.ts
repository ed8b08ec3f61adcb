import type { FastifyReply, FastifyRequest } from 'fastify'
import t from 'tap'
import { checkHook } from '../../src/http/plugins/auth.js'
import { whenReady } from '../../src/shared/maybe.js'

const request = {} as FastifyRequest
const reply = {} as FastifyReply

/** What the hook passed to fastify's `done`: `[]` for "go on", `[error]` for a refusal. */
const outcome = (check: () => void | Promise<void>) => new Promise<unknown[]>((resolve) => {
  checkHook(check)(request, reply, (...args: unknown[]) => resolve(args))
})

t.test('a check answered at once passes on at once, and its throw refuses the request', async (t) => {
  let passed = false
  checkHook(() => undefined)(request, reply, () => { passed = true })
  t.ok(passed, 'done ran before the hook returned')
  const [refusal] = await outcome(() => { throw new Error('revoked') })
  t.match(refusal, { message: 'revoked' })
})

t.test('a check answered later passes on when it settles, and any rejection refuses, a falsy one too', async (t) => {
  t.same(await outcome(() => Promise.resolve()), [])
  t.match((await outcome(() => Promise.reject(new Error('inactive'))))[0], { message: 'inactive' })
  const [falsy] = await outcome(() => Promise.reject(undefined))
  t.ok(falsy instanceof Error, 'an undefined reason still refuses')
})

t.test('whenReady applies the next step at once to a value and after settling to a promise', async (t) => {
  t.equal(whenReady(2, (n) => n + 1), 3)
  const later = whenReady(Promise.resolve(2), (n) => n + 1)
  t.ok(later instanceof Promise)
  t.equal(await later, 3)
})

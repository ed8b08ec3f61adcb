import type { Test } from 'tap'

/** Keys the `Idempotency-Key` header refuses: empty, over 255 characters, a control character. */
export const malformedKeys: readonly string[] = ['', 'k'.repeat(256), 'tab\there']

/** Each malformed Key answers 400, on a request that is otherwise valid. */
export const refusesMalformedKeys = async (t: Test, post: (key: string) => Promise<{ statusCode: number }>, keys = malformedKeys): Promise<void> => {
  for (const key of keys) t.equal((await post(key)).statusCode, 400, JSON.stringify(key))
}

/** Concurrent duplicates under one Key: one made it (201), every other got it back (200). */
export const oneCreatedOthersReturned = (t: Test, responses: ReadonlyArray<{ statusCode: number }>): void => {
  t.same(responses.map((r) => r.statusCode).sort(), [...Array<number>(responses.length - 1).fill(200), 201], 'one 201, the others 200')
}

import t from 'tap'
import { withFiniteNumbers } from '../../src/http/validation.js'

t.test('request schemas get finite numbers and safe integers, keeping the bounds they have and leaving the original alone', async (t) => {
  const schema = {
    type: 'object',
    properties: {
      page: { type: 'integer', minimum: 1, default: 1 },
      rate: { type: 'number', exclusiveMaximum: 100 },
      default: { type: 'integer' },
      tags: { type: 'array', items: { type: ['number', 'null'] } },
      kind: { const: 'x' },
    },
  }
  const before = structuredClone(schema)
  t.same(withFiniteNumbers(schema), {
    type: 'object',
    properties: {
      page: { type: 'integer', minimum: 1, default: 1, maximum: Number.MAX_SAFE_INTEGER },
      rate: { type: 'number', exclusiveMaximum: 100, minimum: -Number.MAX_VALUE },
      default: { type: 'integer', maximum: Number.MAX_SAFE_INTEGER, minimum: -Number.MAX_SAFE_INTEGER },
      tags: { type: 'array', items: { type: ['number', 'null'], maximum: Number.MAX_VALUE, minimum: -Number.MAX_VALUE } },
      kind: { const: 'x' },
    },
  })
  t.same(schema, before, 'the route\'s schema (also used for OpenAPI) is not changed')
})

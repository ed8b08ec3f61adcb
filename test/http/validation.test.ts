import t from 'tap'
import { validatorCompiler, withFiniteNumbers } from '../../src/http/validation.js'

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

t.test('a query\'s integers are digits alone while its numbers stay decimals, exponents included', async (t) => {
  const validate = validatorCompiler({
    schema: {
      type: 'object',
      properties: { count: { type: 'integer' }, ratio: { type: 'number' }, ids: { type: 'array', items: { type: 'integer' } } },
      additionalProperties: false,
    },
    method: 'GET', url: '/x', httpPart: 'querystring',
  })
  const check = (query: Record<string, unknown>) => {
    const data = structuredClone(query)
    const valid = validate(data)
    return { valid, data, errors: (validate as unknown as { errors: Array<{ instancePath: string; message: string }> | null }).errors }
  }
  for (const count of ['1e2', '1.', '1.0', '.5', '1E0', '1e+2', ' 1', '0x10', '1_0', '']) {
    const { valid, errors } = check({ count })
    t.equal(valid, false, `count=${JSON.stringify(count)}`)
    t.same(errors?.map((e) => [e.instancePath, e.message]), [['/count', 'must be integer']], `count=${JSON.stringify(count)}`)
  }
  for (const [count, value] of [['12', 12], ['+12', 12], ['-3', -3], ['007', 7]] as const) {
    t.same(check({ count }), { valid: true, data: { count: value }, errors: null }, `count=${count}`)
  }
  t.equal(check({ ids: ['1', '2e1'] }).valid, false, 'each item of a list of integers is checked')
  t.same(check({ ids: ['1', '20'] }).data, { ids: [1, 20] })
  for (const [ratio, value] of [['1e2', 100], ['1.', 1], ['.5', 0.5], ['-1.5e-1', -0.15], ['+2', 2]] as const) {
    t.same(check({ ratio }), { valid: true, data: { ratio: value }, errors: null }, `ratio=${ratio} is a decimal number`)
  }
  t.equal(check({ ratio: '0x10' }).valid, false, 'a number is still a decimal')
})

t.test('a query\'s choice of whole numbers takes digits alone; a choice with a fraction takes decimals', async (t) => {
  const validate = validatorCompiler({
    schema: {
      type: 'object',
      properties: {
        kind: { anyOf: [{ const: 1, type: 'number' }, { const: 2, type: 'number' }] },
        step: { anyOf: [{ const: 0.5, type: 'number' }, { const: 1, type: 'number' }] },
      },
      additionalProperties: false,
    },
    method: 'GET', url: '/x', httpPart: 'querystring',
  })
  const check = (query: Record<string, unknown>) => {
    const data = structuredClone(query)
    return { valid: validate(data), data }
  }
  for (const kind of ['1e0', '1.', '1.0', '+1e0', '0x1']) t.equal(check({ kind }).valid, false, `kind=${kind}`)
  t.same(check({ kind: '2' }), { valid: true, data: { kind: 2 } })
  t.equal(check({ kind: '3' }).valid, false, 'not a choice')
  t.same(check({ step: '5e-1' }), { valid: true, data: { step: 0.5 } }, 'a decimal with an exponent, as a number may be written')
})

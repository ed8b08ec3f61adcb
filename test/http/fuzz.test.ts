/**
 * A seeded sweep over every operation of the OpenAPI document. For each one:
 * requests without or with bad credentials; schema-valid requests (path ids
 * drawn from real fixtures); then, from a valid request the service accepted,
 * one field at a time set to a schema-valid edge (a leap second, year 0, 2^53,
 * 60-digit decimals, the longest text) or to a schema-invalid value (wrong
 * types, null, empty, 10k characters, unknown fields, arrays for objects,
 * malformed or hostile JSON, bad path ids and query values, bad organization
 * headers, broken uploads). No answer may be a 5xx, every 4xx must be the
 * failure envelope, and a member of another organization, acting in it, must
 * never be shown an id of this one by a route that needs credentials. The inputs are fixed by the seed (per operation, so a new
 * route does not reshuffle the others); fixture ids differ from run to run.
 *
 * FUZZ_OPS=<regex over "METHOD /path"> narrows the sweep (to reproduce a finding); FUZZ_SEED=<n> sends other inputs;
 * FUZZ_DEBUG=1 prints every 4xx/5xx answer to valid and edge requests on stderr.
 */
import dns from 'node:dns'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { pino } from 'pino'
import t from 'tap'
import { buildApp } from '../../src/http/app.js'
import { allScopes } from '../../src/shared/permissions.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { multipartBody, pdfBytes, pngBytes, textBytes } from '../helpers/files.js'
import { createDebtor, lending, lineBody } from '../helpers/lending.js'
import { addMember } from '../helpers/members.js'
import { createOrganization } from '../helpers/organizations.js'
import { consumerModel } from '../helpers/scoring.js'

/** FUZZ_SEED explores other inputs; CI runs the fixed seed, so a finding reproduces. */
const SEED = Number(process.env['FUZZ_SEED'] ?? 0x5eed2026)
const VALID_PER_OPERATION = 16
const EDGES_PER_OPERATION = 80
const ANSWER_WITHIN_MS = 5_000

// ---------------------------------------------------------------- randomness

class Rng {
  constructor(private state: number) {}
  next(): number { // mulberry32
    this.state = (this.state + 0x6d2b79f5) | 0
    let x = Math.imul(this.state ^ (this.state >>> 15), 1 | this.state)
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
  int(min: number, max: number): number { return min + Math.floor(this.next() * (max - min + 1)) }
  chance(p: number): boolean { return this.next() < p }
  pick<T>(items: readonly T[]): T { return items[Math.floor(this.next() * items.length)] as T }
  hex(n: number): string { return Array.from({ length: n }, () => '0123456789abcdef'[this.int(0, 15)]).join('') }
  uuid(): string { return `${this.hex(8)}-${this.hex(4)}-4${this.hex(3)}-${this.pick(['8', '9', 'a', 'b'])}${this.hex(3)}-${this.hex(12)}` }
}

const hash = (text: string): number => [...text].reduce((h, c) => Math.imul(h ^ c.charCodeAt(0), 16777619) >>> 0, 2166136261)

// ---------------------------------------------------------------- JSON schema → values

interface Schema {
  type?: string | string[]; format?: string; pattern?: string; enum?: unknown[]; const?: unknown; examples?: unknown[]; nullable?: boolean
  minLength?: number; maxLength?: number; minimum?: number; maximum?: number; exclusiveMinimum?: number; exclusiveMaximum?: number; multipleOf?: number
  items?: Schema; minItems?: number; maxItems?: number; uniqueItems?: boolean
  properties?: Record<string, Schema>; required?: string[]; additionalProperties?: boolean | Schema; minProperties?: number; maxProperties?: number
  anyOf?: Schema[]; oneOf?: Schema[]; allOf?: Schema[]
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

/** Texts valid wherever any text is, that parsers of templates, JSONPath, CEL, CSV and queries like to choke on. */
const NASTY = ['{{', '{{.Credit.ID}}', '{{range .Installments}}{{.ID}}{{end}}', '{{index . 99}}', '{{template "x"}}', '$..[?(@.a)]', '$[',
  'age < ', 'size(', '1 / 0', '=SUM(A1)', '"quoted"', "it's", '\\', '%s%n%x', '<script>', 'ñandú €😀', '\u0000', '$where', 'a.b.c', '__proto__', '   ']

/** Valid RFC 3339 texts that Date handles badly or not at all (a leap second, year 0, offsets, nanoseconds). */
const EDGE_TIMES = ['2016-12-31T23:59:60Z', '0000-01-01T00:00:00Z', '9999-12-31T23:59:59.999Z', '2024-02-29T23:30:00-14:00', '2020-01-01T00:00:00.123456789Z', '1970-01-01t00:00:00z']
const EDGE_DATES = ['0000-01-01', '9999-12-31', '2024-02-29', '1900-02-28']
const EDGE_NUMBERS = [0, -1, 1, 0.5, 2 ** 53, 2 ** 53 + 2, -(2 ** 53), 1e21, 1e308, -1e308, 5e-324]
const EDGE_DECIMALS = ['0', '0.0', '-0', '9'.repeat(60), `${'9'.repeat(30)}.${'9'.repeat(30)}`, `0.${'0'.repeat(40)}1`, `-${'9'.repeat(40)}`, '00001.50']

/** Plausible values for fields whose names say what they hold (webhook templates, scopes, the token form). */
const TEXT_HINTS: Record<string, readonly string[]> = {
  currency: ['COP', 'USD', 'EUR'],
  requestHeader: ['{}', '{"X-Credit":"{{.Credit.ID}}"}'], authRequestHeader: ['{}', '{"Accept":"application/json"}'],
  requestBody: ['{"id":"{{.Credit.ID}}"}', '{}'], authRequestBody: ['grant_type=client_credentials', '{}'],
  authHeader: ['Authorization', 'X-Token'], tokenHeader: ['X-Token'], tokenSourceKey: ['access_token', '$.data.token'], tokenType: ['Bearer', ''],
  responseQueries: ['$.id', '$..token'], signingSecret: [`whsec_${Buffer.alloc(24, 7).toString('base64')}`],
  scopes: allScopes, scope: ['*', 'users:read clients:read'],
  grant_type: ['client_credentials', 'password', 'refresh_token', 'urn:credit-service:grant-type:mfa-otp'],
  client_id: ['test-admin'], client_secret: ['test-admin-secret'], username: ['fuzz-analyst'], password: ['correct horse battery'],
}

/** Real fixture ids for uuid fields and path parameters, by name. */
interface Hints { idFor(name: string, rng: Rng): string | undefined }

/** A string matching a (simple) regular expression: classes, groups, alternation, quantifiers. */
const fromPattern = (source: string, rng: Rng): string => {
  const ALNUM = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'
  const escapes: Record<string, string> = { d: '0123456789', w: `${ALNUM}_`, s: ' ' }
  let i = 0
  type Gen = () => string
  const alternation = (): Gen => {
    const branches = [sequence()]
    while (source[i] === '|') { i++; branches.push(sequence()) }
    return () => rng.pick(branches)()
  }
  const sequence = (): Gen => {
    const parts: Gen[] = []
    while (i < source.length && source[i] !== '|' && source[i] !== ')') {
      const gen = atom()
      const [min, max] = quantifier()
      parts.push(() => Array.from({ length: rng.int(min, max) }, gen).join(''))
    }
    return () => parts.map((part) => part()).join('')
  }
  const atom = (): Gen => {
    const c = source[i++] ?? ''
    if (c === '^' || c === '$') return () => ''
    if (c === '.') return () => rng.pick([...ALNUM])
    if (c === '\\') { const e = source[i++] ?? ''; const set = escapes[e]; return set === undefined ? () => e : () => rng.pick([...set]) }
    if (c === '(') { if (source.startsWith('?:', i)) i += 2; const inner = alternation(); i++; return inner }
    if (c !== '[') return () => c
    const chars: string[] = []
    while (i < source.length && source[i] !== ']') {
      let from = source[i++] ?? ''
      if (from === '\\') { const e = source[i++] ?? ''; const set = escapes[e]; if (set !== undefined) { chars.push(...set); continue } from = e }
      if (source[i] === '-' && source[i + 1] !== ']') {
        const to = source[i + 1] === '\\' ? source[i + 2] ?? '' : source[i + 1] ?? ''
        i += source[i + 1] === '\\' ? 3 : 2
        for (let code = from.charCodeAt(0); code <= to.charCodeAt(0); code++) chars.push(String.fromCharCode(code))
      } else chars.push(from)
    }
    i++
    return () => rng.pick(chars)
  }
  const quantifier = (): [number, number] => {
    const c = source[i]
    if (c === '?' || c === '*' || c === '+') { i++; return c === '?' ? [0, 1] : c === '*' ? [0, 3] : [1, 4] }
    const m = c === '{' ? /^\{(\d+)(,(\d*))?\}/.exec(source.slice(i)) : null
    if (m === null) return [1, 1]
    i += m[0].length
    const min = Number(m[1])
    return [min, m[2] === undefined ? min : m[3] ? Number(m[3]) : min + 3]
  }
  return alternation()()
}

/** Whether a scalar fits its schema's length, pattern and bounds. */
const fits = (schema: Schema, value: Json): boolean => {
  if (typeof value === 'string') {
    return [...value].length >= (schema.minLength ?? 0) && [...value].length <= (schema.maxLength ?? Infinity) &&
      (schema.pattern === undefined || new RegExp(schema.pattern, 'u').test(value))
  }
  if (typeof value === 'number') {
    return value >= (schema.minimum ?? -Infinity) && value <= (schema.maximum ?? Infinity) && value > (schema.exclusiveMinimum ?? -Infinity) &&
      value < (schema.exclusiveMaximum ?? Infinity) && (schema.type !== 'integer' || Number.isInteger(value))
  }
  return false
}

const dateTime = (rng: Rng) => new Date(Date.UTC(rng.int(2000, 2040), rng.int(0, 11), rng.int(1, 28), rng.int(0, 23), rng.int(0, 59), rng.int(0, 59))).toISOString()

const stringFor = (schema: Schema, name: string, rng: Rng, hints: Hints): string => {
  switch (schema.format) {
    case 'uuid': return hints.idFor(name, rng) ?? rng.uuid()
    case 'date-time': return rng.chance(0.1) ? rng.pick(EDGE_TIMES) : dateTime(rng)
    case 'date': return rng.chance(0.1) ? rng.pick(EDGE_DATES) : dateTime(rng).slice(0, 10)
    case 'email': return `${rng.hex(6)}@example.co`
    case 'uri': case 'url': return `https://hooks.invalid/${rng.hex(4)}`
  }
  // OAuth client ids are free text, not uuids: the one pool of real ids a plain string takes from.
  if (poolKey(name) === 'clients') {
    const id = hints.idFor(name, rng)
    if (id !== undefined && fits(schema, id)) return id
  }
  const hinted = TEXT_HINTS[name] ?? (/url$/i.test(name) ? [`https://hooks.invalid/${rng.hex(4)}`] : undefined)
  if (hinted !== undefined && rng.chance(0.7)) {
    const value = rng.pick(hinted)
    if (fits(schema, value)) return value
  }
  const min = schema.minLength ?? 0
  const max = schema.maxLength ?? Math.max(min, 40)
  for (let attempt = 0; attempt < 20; attempt++) {
    const candidate = schema.pattern !== undefined ? fromPattern(schema.pattern, rng)
      : rng.chance(0.3) ? rng.pick(NASTY)
      : Array.from({ length: rng.int(min, Math.min(max, min + 12)) }, () => rng.pick([...'abcxyzABC019 -_.ñ'])).join('')
    if (fits(schema, candidate)) return candidate
  }
  return 'a'.repeat(min)
}

const numberFor = (schema: Schema, integer: boolean, rng: Rng): number => {
  const step = integer ? 1 : 0.01
  const lo = schema.minimum ?? (schema.exclusiveMinimum === undefined ? undefined : schema.exclusiveMinimum + step)
  const hi = schema.maximum ?? (schema.exclusiveMaximum === undefined ? undefined : schema.exclusiveMaximum - step)
  if (lo !== undefined && rng.chance(0.2)) return lo
  if (hi !== undefined && rng.chance(0.2)) return hi
  const from = lo ?? (hi === undefined ? rng.pick([-1000, 0, 1]) : hi - 1000)
  const to = hi ?? from + rng.pick([10, 1000, 1e9])
  let value = from + rng.next() * (to - from)
  if (schema.multipleOf !== undefined) value = Math.ceil(value / schema.multipleOf) * schema.multipleOf
  return integer ? Math.min(Math.ceil(value), hi ?? Infinity) : Math.round(value * 100) / 100
}

const typeOf = (schema: Schema, rng: Rng): string | undefined => {
  const types = Array.isArray(schema.type) ? schema.type : schema.type === undefined ? [] : [schema.type]
  if (types.length > 0) return rng.pick(types)
  if (schema.properties !== undefined) return 'object'
  if (schema.items !== undefined) return 'array'
  return undefined
}

const MAP_KEYS = ['k', 'x-trace', 'a.b', '$gt', 'constructor', 'toString', 'ñ', '']

/** A value the schema accepts; `fill` is the chance of each optional property. */
const generate = (schema: Schema, rng: Rng, hints: Hints, name = '', fill = 0.5): Json => {
  if (schema.const !== undefined) return schema.const as Json
  if (schema.enum !== undefined) return rng.pick(schema.enum) as Json
  if (schema.examples !== undefined && rng.chance(0.3)) return rng.pick(schema.examples) as Json
  const branches = schema.anyOf ?? schema.oneOf
  if (branches !== undefined) return generate(rng.pick(branches), rng, hints, name, fill)
  if (schema.allOf !== undefined) {
    const merged = { type: 'object', properties: Object.assign({}, ...schema.allOf.map((s) => s.properties)), required: schema.allOf.flatMap((s) => s.required ?? []) }
    return generate(merged, rng, hints, name, fill)
  }
  if (schema.nullable === true && rng.chance(0.1)) return null
  switch (typeOf(schema, rng)) {
    case 'null': return null
    case 'boolean': return rng.chance(0.5)
    case 'string': return stringFor(schema, name, rng, hints)
    case 'integer': return numberFor(schema, true, rng)
    case 'number': return numberFor(schema, false, rng)
    case 'array': {
      const min = schema.minItems ?? 0
      const count = rng.int(min, Math.min(schema.maxItems ?? min + 3, min + 3))
      const items: Json[] = []
      for (let attempt = 0; items.length < count && attempt < count + 20; attempt++) {
        const item = generate(schema.items ?? {}, rng, hints, name, fill)
        if (schema.uniqueItems !== true || !items.some((other) => JSON.stringify(other) === JSON.stringify(item))) items.push(item)
      }
      return items
    }
    case 'object': {
      const out: { [key: string]: Json } = {}
      const required = new Set(schema.required ?? [])
      const everything = (schema.minProperties ?? 0) > required.size
      for (const [key, property] of Object.entries(schema.properties ?? {})) {
        if (required.has(key) || everything || rng.chance(fill)) out[key] = generate(property, rng, hints, key, fill)
      }
      const extra = schema.additionalProperties
      if (typeof extra === 'object' && schema.properties === undefined) {
        const wanted = rng.int(schema.minProperties ?? 0, Math.min(schema.maxProperties ?? 2, 2))
        for (let k = 0; Object.keys(out).length < wanted && k < 10; k++) out[rng.pick(MAP_KEYS)] = generate(extra, rng, hints, name, fill)
      }
      return out
    }
    default: // unconstrained: any JSON
      return rng.pick<() => Json>([() => 'text', () => 42, () => null, () => [1, 'two'], () => ({ a: { b: [true] } }), () => rng.pick(NASTY)])()
  }
}

/** Values the schema accepts at its edges. */
const edgesOf = (schema: Schema): Json[] => {
  if (schema.enum !== undefined || schema.const !== undefined) return []
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type
  if (type === 'string' && schema.format === 'date-time') return EDGE_TIMES
  if (type === 'string' && schema.format === 'date') return EDGE_DATES
  if (type === 'string' && schema.format === undefined) {
    const longest = schema.maxLength !== undefined && schema.maxLength <= 10_000 ? ['é'.repeat(schema.maxLength)] : []
    return [...longest, ...EDGE_DECIMALS, ...NASTY].filter((value) => fits(schema, value))
  }
  if (type === 'integer' || type === 'number') {
    return [...new Set([schema.minimum, schema.maximum, ...EDGE_NUMBERS].filter((n): n is number => n !== undefined))].filter((value) => fits(schema, value))
  }
  return []
}

const wrongTypeFor = (schema: Schema, rng: Rng): Json => {
  const type = typeOf(schema, rng)
  const others: Json[] = [null, true, 0, '', 'text', [], {}, [null], { a: 1 }]
  return rng.pick(others.filter((value) => (type === 'string' ? typeof value !== 'string' : type === 'array' ? !Array.isArray(value) : typeof value !== type)))
}

// ---------------------------------------------------------------- the OpenAPI document

interface Parameter { name: string; in: 'path' | 'query' | 'header'; required?: boolean; schema: Schema }
interface Operation {
  method: string
  path: string
  parameters: Parameter[]
  body?: { contentType: string; schema: Schema }
  documented: Set<number>
  /** An SSE stream: it never ends, so only refusals are sent to it. */
  stream: boolean
  /** The body is a file (raw bytes or multipart), not described by a schema. */
  upload: boolean
  /** Needs no credentials (`security: []`): what it shows is for anyone. */
  public: boolean
}

interface OpenApiOperation {
  security?: unknown[]
  parameters?: Parameter[]
  requestBody?: { content: Record<string, { schema: Schema }> }
  responses?: Record<string, { content?: Record<string, unknown> }>
}

const operationsOf = (doc: { paths: Record<string, Record<string, OpenApiOperation>> }): Operation[] =>
  Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]): Operation => {
    const [contentType, media] = Object.entries(op.requestBody?.content ?? {})[0] ?? []
    const responses = Object.entries(op.responses ?? {})
    return {
      method: method.toUpperCase(),
      path,
      parameters: op.parameters ?? [],
      ...(contentType === undefined || media === undefined ? {} : { body: { contentType, schema: media.schema } }),
      documented: new Set(responses.map(([status]) => Number(status))),
      stream: responses.some(([, r]) => Object.keys(r.content ?? {}).includes('text/event-stream')),
      upload: method === 'put' && /\/(files|signature-file)\/\{[^}]+\}$/.test(path),
      public: op.security !== undefined && op.security.length === 0,
    }
  }))

// ---------------------------------------------------------------- requests

interface Request { kind: string; method: string; url: string; headers: Record<string, string>; payload?: string | Buffer }
interface Parts { path: Record<string, string>; query: Record<string, Json>; headers: Record<string, string>; body?: Json }
interface Raw { payload: string | Buffer; contentType: string }

const queryText = (value: Json): string[] =>
  Array.isArray(value) ? value.flatMap(queryText) : [value !== null && typeof value === 'object' ? JSON.stringify(value) : String(value)]

const formOf = (value: Json): string => {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return JSON.stringify(value)
  const form = new URLSearchParams()
  for (const [key, field] of Object.entries(value)) for (const text of queryText(field)) form.append(key, text)
  return form.toString()
}

/** The request as sent: the body is serialized here, so a report shows exactly the bytes. */
const build = (op: Operation, parts: Parts, kind: string, auth: Record<string, string>, raw?: Raw): Request => {
  const path = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(parts.path[name] ?? ''))
  const query = new URLSearchParams()
  for (const [key, value] of Object.entries(parts.query)) for (const text of queryText(value)) query.append(key, text)
  const search = query.toString()
  const headers: Record<string, string> = { ...auth, ...parts.headers }
  let payload: string | Buffer | undefined
  if (raw !== undefined) {
    payload = raw.payload
    headers['content-type'] = raw.contentType
  } else if (op.body !== undefined && parts.body !== undefined) {
    payload = op.body.contentType === 'application/x-www-form-urlencoded' ? formOf(parts.body) : JSON.stringify(parts.body)
    headers['content-type'] = op.body.contentType
  }
  return { kind, method: op.method, url: search === '' ? path : `${path}?${search}`, headers, ...(payload === undefined ? {} : { payload }) }
}

/** A schema-valid request; `fill` is the chance of each optional field and query parameter. */
const validParts = (op: Operation, rng: Rng, hints: Hints, fill = 0.5): Parts => {
  const parts: Parts = { path: {}, query: {}, headers: {} }
  for (const p of op.parameters) {
    if ((p.in === 'query' && p.required !== true && !rng.chance(fill)) || p.name === 'last-event-id') continue
    const value = generate(p.schema, rng, hints, p.in === 'path' ? `${op.path}#${p.name}` : p.name)
    if (p.in === 'query') parts.query[p.name] = value
    else if (p.in === 'path') parts.path[p.name] = queryText(value)[0] ?? ''
    else parts.headers[p.name] = queryText(value)[0] ?? ''
  }
  if (op.body !== undefined) parts.body = generate(op.body.schema, rng, hints, '', fill)
  return parts
}

const uploadOf = (op: Operation, rng: Rng): Raw | undefined => (op.upload ? { payload: rng.pick([pngBytes, pdfBytes]), contentType: 'application/octet-stream' } : undefined)

interface Slot { at: Array<string | number>; schema: Schema; value: Json }

/** Every place in a JSON value (itself, each property, each item) with its schema. */
const slotsOf = (value: Json, schema: Schema, at: Array<string | number> = []): Slot[] => {
  const here = [{ at, schema, value }]
  const resolved = schema.anyOf?.[0] ?? schema.oneOf?.find((branch) => branch.properties !== undefined) ?? schema
  if (Array.isArray(value)) return [...here, ...value.flatMap((item, k) => slotsOf(item, resolved.items ?? {}, [...at, k]))]
  if (value !== null && typeof value === 'object') {
    const properties = resolved.properties ?? schema.properties ?? {}
    const extra = typeof resolved.additionalProperties === 'object' ? resolved.additionalProperties : {}
    return [...here, ...Object.entries(value).flatMap(([key, item]) => slotsOf(item, properties[key] ?? extra, [...at, key]))]
  }
  return here
}

const setAt = (root: Json, at: Array<string | number>, value: Json): Json => {
  if (at.length === 0) return value
  const copy: Json = structuredClone(root)
  let node = copy as Record<string | number, Json>
  for (const key of at.slice(0, -1)) node = node[key] as Record<string | number, Json>
  node[at[at.length - 1] as string | number] = value
  return copy
}

const BAD_PATH = ['not-a-uuid', ' ', 'x'.repeat(300), '00000000-0000-0000-0000-000000000000', 'DE305D54-75B4-431B-ADB2-EB6B9E546014', '..']
const RAW_PATH = ['%00', '%ZZ', '%E0%A4%A', '..%2F..%2Fhealth', '%2e%2e']
const BAD_QUERY: Json[] = ['', ' ', 'x'.repeat(10_000), '1e999', '-1', '9'.repeat(400), 'NaN', ['1', '2'], '2016-12-31T23:59:60Z', 'not-a-uuid']
const BAD_ORGANIZATION = ['nope', '', '00000000-0000-0000-0000-000000000000']
const HUGE = 'x'.repeat(10_000)
const deep = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth)

/** From a request the service accepted: schema-valid edges one field at a time, then schema-invalid bodies, paths, queries, headers and uploads. */
const hostileRequests = (op: Operation, template: Parts, rng: Rng, auth: Record<string, string>): Request[] => {
  const upload: Raw | undefined = op.upload ? { payload: pngBytes, contentType: 'application/octet-stream' } : undefined
  const slots = op.body !== undefined && template.body !== undefined ? slotsOf(template.body, op.body.schema) : []
  const withBody = (kind: string, body: Json) => build(op, { ...template, body }, kind, auth)
  const perField = [
    ...op.parameters.filter((q) => q.in === 'query').map((p) => edgesOf(p.schema).map((value) => build(op, { ...template, query: { ...template.query, [p.name]: value } }, 'edge', auth, upload))),
    ...slots.map((slot) => edgesOf(slot.schema).map((value) => withBody('edge', setAt(template.body ?? null, slot.at, value)))),
  ]
  // Round robin over the fields (the first edge of each, then the second…), so a cap leaves every field its first edges.
  const out: Request[] = []
  for (let round = 0; round < Math.max(0, ...perField.map((edges) => edges.length)); round++) {
    for (const edges of perField) if (edges[round] !== undefined) out.push(edges[round] as Request)
  }
  out.splice(EDGES_PER_OPERATION)

  if (op.body !== undefined) {
    const json = op.body.contentType
    const mutateSlot = (kind: string, choose: (s: Slot) => boolean, change: (s: Slot) => Json, otherwise: Json) => {
      const candidates = slots.filter(choose)
      const slot = candidates.length === 0 ? undefined : rng.pick(candidates)
      out.push(withBody(kind, slot === undefined ? otherwise : setAt(template.body ?? null, slot.at, change(slot))))
    }
    const isObject = ({ value }: Slot) => value !== null && typeof value === 'object' && !Array.isArray(value)
    mutateSlot('body:wrong-type', () => true, (s) => wrongTypeFor(s.schema, rng), {})
    mutateSlot('body:null-field', (s) => s.at.length > 0, () => null, null)
    mutateSlot('body:empty-string', (s) => typeof s.value === 'string', () => '', '')
    mutateSlot('body:huge-string', (s) => typeof s.value === 'string', () => HUGE, HUGE)
    mutateSlot('body:bad-number', (s) => typeof s.value === 'number', () => rng.pick([-1, -1e308, 1e308, 0.5, 1e21]), -1)
    mutateSlot('body:bad-decimal', (s) => typeof s.value === 'string' && /^-?[0-9]/.test(s.value), () => rng.pick(['-1', '1e3', '0x10', '1,5', 'NaN', '.5', '9'.repeat(400)]), '1')
    mutateSlot('body:unknown-field', isObject, (s) => ({ ...(s.value as Record<string, Json>), unknownField: 1 }), { unknownField: 1 })
    mutateSlot('body:array-for-object', isObject, (s) => [s.value], [])
    // Texts JSON.stringify cannot make: spliced in place of one field.
    const leaf = slots.length === 0 ? undefined : rng.pick(slots)
    const spliced = (text: string) => (leaf === undefined || leaf.at.length === 0 ? text : JSON.stringify(setAt(template.body ?? null, leaf.at, '\u0001')).replace('"\\u0001"', text))
    const raw = (kind: string, payload: string, contentType = json) => out.push(build(op, template, kind, auth, { payload, contentType }))
    raw('body:deep-nesting', spliced(deep(5_000)))
    raw('body:overflow-number', spliced(rng.pick(['1e999', '-1e999'])))
    raw('body:malformed', rng.pick(['{"a":', '{', 'nul', '[1,]', '{"a":1}}', "{'a':1}", '\u0000', '"unterminated']))
    raw('body:proto', rng.pick(['{"__proto__":{"isAdmin":true}}', '{"constructor":{"prototype":{"x":1}}}']))
    raw('body:empty', '')
    raw('body:json-scalar', rng.pick(['null', '0', '"text"', 'true', '[]']))
    raw('body:wrong-media-type', rng.pick(['a,b\n1,2', '<x/>']), rng.pick(['text/csv', 'application/xml', 'application/json; charset=latin1', 'multipart/form-data']))
  }
  if (op.upload) {
    const multipart = multipartBody(pngBytes, '../../etc/passwd', 'image/png')
    for (const file of [
      { payload: textBytes, contentType: 'image/png' }, { payload: Buffer.alloc(0), contentType: 'application/octet-stream' },
      { payload: pngBytes.subarray(0, 20), contentType: 'application/octet-stream' }, multipart,
      { payload: multipart.payload.subarray(0, 60), contentType: multipart.contentType }, { payload: pdfBytes, contentType: 'multipart/form-data; boundary=x' },
    ]) out.push(build(op, { ...template, query: rng.chance(0.5) ? { filename: 'x'.repeat(300) } : {} }, 'upload:content', auth, file))
  }
  for (const p of op.parameters) {
    const where = p.in === 'query' ? 'query' : p.in === 'path' ? 'path' : 'headers'
    const values = p.in === 'path' ? BAD_PATH : p.in === 'query' ? BAD_QUERY : p.name.endsWith('organization-id') ? BAD_ORGANIZATION : []
    for (const value of values) out.push(build(op, { ...template, [where]: { ...template[where], [p.name]: value } }, `${p.in}:bad-${p.name}`, auth, upload))
    if (p.in !== 'path') continue
    for (const text of RAW_PATH) { // not valid URL components: sent as they are
      const request = build(op, { ...template, path: { ...template.path, [p.name]: '\u0001' } }, `path:raw-${p.name}`, auth, upload)
      out.push({ ...request, url: request.url.replace('%01', text) })
    }
  }
  const extra = build(op, template, 'query:unknown', auth, upload)
  out.push({ ...extra, url: `${extra.url}${extra.url.includes('?') ? '&' : '?'}unknownParam=1&__proto__=1&constructor[prototype][x]=1` })
  return out
}

// ---------------------------------------------------------------- fixtures

interface Fixtures { pools: Record<string, string[]>; foreignToken: string; foreignOrganizationId: string }

/** Which pool of real ids a path parameter or body field takes from (`{id}` by the path segment before it). */
const poolKey = (name: string): string => {
  const [path, param] = name.includes('#') ? name.split('#') as [string, string] : ['', name]
  if (param === 'id') return /\/([^/{}]+)\/\{id\}/.exec(path)?.[1] ?? 'id'
  if (param === 'orderid' || param === 'orderID') return path.startsWith('/v1/exports') ? 'exports' : 'orders'
  const named: Record<string, string> = {
    entityid: 'organization', organizationId: 'organization', 'organization-id': 'organization', 'config-organization-id': 'organization', configid: 'config',
    webhookid: 'webhook', webhookID: 'webhook', debtorId: 'profiles', signerId: 'profiles', profileId: 'profiles', creditLineId: 'credit-lines',
    creditid: 'credits', installmentid: 'installments', roleTemplateId: 'role-template', creditLimitId: 'credit-limits', documentId: 'documents',
    signatureId: 'signatures', signatureFileId: 'signature-files', fileId: 'profile-files', fileid: 'exports', userId: 'users', productid: 'products',
    cityId: 'cities', clientId: 'clients',
  }
  return named[param] ?? (/webhook/i.test(param) ? 'webhook' : param)
}

/** The string at a path of a JSON answer (a fixture's id). */
const at = (value: unknown, ...path: string[]): string => {
  const found = path.reduce<unknown>((node, key) => (node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined), value)
  if (typeof found !== 'string') throw new Error(`fixture: no ${path.join('.')} in ${JSON.stringify(value).slice(0, 300)}`)
  return found
}

/** One of each resource the routes take ids of, created through the API, plus a foreign organization and a member of it. */
const createFixtures = async (svc: TestApp): Promise<Fixtures> => {
  const organizationId = svc.organizationId
  const call = async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object | Buffer, status = method === 'GET' ? 200 : 201, headers: Record<string, string> = {}) => {
    const response = await svc.call({ method, url, token: svc.adminToken, organizationId, headers, ...(payload === undefined ? {} : { payload }) })
    if (response.statusCode !== status) throw new Error(`fixture ${method} ${url}: expected ${status}, got ${response.statusCode} ${response.body}`)
    return response.json() as unknown
  }
  const configHeaders = { 'config-organization-id': organizationId }
  const octets = { 'content-type': 'application/octet-stream' }
  const l = await lending(svc)
  const lineId = await l.createLine()
  await l.createLine(lineBody({ name: 'Dólares', currency: 'USD' }))
  const credit = await l.disbursedCredit({ creditLineId: lineId })
  const requested = await l.requestCredit({ creditLineId: lineId, debtorId: await createDebtor(svc.runtime, organizationId, 'Luis') })
  const orderId = at(await call('POST', `/v1/payables/${credit.ID}/installments/${credit.installments[0]?.ID ?? ''}/orders`, { Key: 'fuzz-1' }), 'order', 'ID')
  const profileId = at(await call('POST', '/v1/profiles', {
    type: 'natural', natural: { firstName: 'Ana', lastName: 'Gómez', documentType: 'CC', documentNumber: '1020304050', email: 'ana@example.co' },
  }, 201, configHeaders), 'data', 'ID')
  const profileFileId = at(await call('PUT', `/v1/profiles/${profileId}/files/identity-document-front`, pdfBytes, 201, { ...configHeaders, ...octets }), 'data', 'file', 'fileId')
  const documentId = '7d6f3a52-0c1e-4b8a-9f3e-2a1b0c9d8e7f'
  const signatureId = at(await call('POST', `/v1/document/${documentId}/signature-scan`, { signerId: profileId, requiredFiles: [['image'], ['document-front']] }), 'data', 'id')
  const signatureFileId = at(await call('PUT', `/v1/document/${documentId}/signature-scan/${signatureId}/signature-file/image`, pngBytes, 201, octets), 'data', 'fileId')
  const webhookId = at(await call('POST', '/v1/webhook', { tag: 'crm', url: 'https://crm.invalid/hooks', requestBody: '{"id":"{{.Credit.ID}}"}' }), 'data', 'ID')
  const taxId = at(await call('POST', '/v1/taxes', { name: 'IVA', percentage: 19, type: 'VAT', applies_to: ['FEE', 'PAYMENT'] }), 'data', 'id')
  const configId = at(await call('GET', `/v1/organizations/${organizationId}`), 'data', 'organization', 'defaultConfigId')
  const modelId = at(await call('POST', `/v1/organization/${organizationId}/config/${configId}/scoring-model`, consumerModel, 201, configHeaders), 'data', 'ID')
  const roleTemplateId = at(await call('POST', `/v1/organization/${organizationId}/role-template`, { name: 'Fuzz readers', permissions: ['ReadCredit', 'ReadProfile'] }), 'data', 'id')
  const limitId = at(await call('POST', '/v1/creditor/credit-limits', { debtorId: profileId, maxAmount: '5000000.00', currency: 'COP', expirationDate: '2099-12-31' }),
    'creditLimit', 'creditLimitId')
  const exportId = at(await call('POST', '/v1/exports', { type: 'receivables' }, 202), 'data', 'orderID')
  const productId = at(await call('GET', '/v1/products'), 'data', 'products', '0', 'ID')
  const cityId = at(await call('GET', '/v1/cities?q=bog'), 'data', 'cities', '0', 'id')
  const clientId = at(await call('POST', '/v1/oauth/clients', { name: 'Fuzz integration', scopes: [], organizationId, roleTemplateId }), 'data', 'client', 'client_id')
  const member = await addMember(svc, organizationId, 'fuzz-analyst', 'analyst')
  const foreign = await createOrganization(svc, 'Fuzz foreign organization')
  const foreignMember = await addMember(svc, foreign.id, 'fuzz-foreign', 'administrator')
  return {
    foreignToken: foreignMember.token,
    foreignOrganizationId: foreign.id,
    pools: {
      organization: [organizationId], config: [configId], 'credit-lines': [lineId], credits: [credit.ID, requested.ID], installments: credit.installments.map((i) => i.ID),
      orders: [orderId], profiles: [profileId, at(requested, 'debtorId')], 'profile-files': [profileFileId], documents: [documentId], signatures: [signatureId],
      'signature-files': [signatureFileId], webhook: [webhookId], taxes: [taxId], 'scoring-model': [modelId], 'role-template': [roleTemplateId],
      'credit-limits': [limitId], exports: [exportId], products: [productId], cities: [cityId], users: [member.userId],
      clients: [clientId],
    },
  }
}

// ---------------------------------------------------------------- checking answers

interface Finding { operation: string; request: Request; status: number; body: string; problem: string; log: string[] }

const isEnvelope = (op: Operation, body: string): boolean => {
  try {
    const parsed: unknown = JSON.parse(body)
    if (parsed === null || typeof parsed !== 'object') return false
    if (op.path === '/v1/oauth/token' || op.path === '/v1/oauth/revoke') return 'error' in parsed && typeof parsed.error === 'string' // RFC 6749 errors, by design
    return 'status' in parsed && parsed.status === 'fail' && 'data' in parsed && typeof parsed.data === 'object' && parsed.data !== null &&
      'code' in parsed.data && typeof parsed.data.code === 'string'
  } catch {
    return false
  }
}

/** 501 is a documented "understood but not done" answer (e.g. dryRun of another type), in the failure envelope. */
const problemOf = (op: Operation, status: number, body: string): string | null => {
  if (status === 501 && op.documented.has(501) && isEnvelope(op, body)) return null
  if (status >= 500) return `answered ${status}`
  if (status >= 400 && !isEnvelope(op, body)) return `answered ${status} without the failure envelope`
  return null
}

const clip = (text: string, max = 600) => (text.length <= max ? text : `${text.slice(0, max)}…(${text.length} chars)`)

/** What a bad answer is, whatever the request: the problem and, for a 5xx, the logged error and where it was thrown. */
const signatureOf = (f: Finding): string => {
  const normalize = (text: string) => text.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/gi, '<id>').replace(/'\/v1\/[^']*'/g, '<url>').slice(0, 160)
  for (const line of f.log) {
    const entry: unknown = JSON.parse(line)
    const err = entry !== null && typeof entry === 'object' && 'err' in entry ? entry.err as { type?: string; message?: string; stack?: string } : undefined
    if (err === undefined) continue
    const stack = err.stack ?? ''
    const frame = /\((\/[^)]*\/src\/[^)]*)\)/.exec(stack)?.[1]?.replace(/^.*\/src\//, 'src/') ?? /\(?(\/[^)\s]*node_modules\/[^)\s]*)\)?/.exec(stack)?.[1]?.replace(/^.*node_modules\//, '') ?? '?'
    return `${f.problem}: ${err.type ?? 'Error'}: ${normalize(err.message ?? '')} at ${frame}`
  }
  try {
    const body: unknown = JSON.parse(f.body)
    return `${f.problem}: ${body !== null && typeof body === 'object' ? String('code' in body ? body.code : 'error' in body ? body.error : '') : ''}`
  } catch {
    return `${f.problem}: ${normalize(f.body)}`
  }
}

const describe = (f: Finding): string => {
  const headers = Object.fromEntries(Object.entries(f.request.headers).map(([k, v]) => [k, k === 'authorization' ? clip(v, 40) : clip(v, 120)]))
  const payload = f.request.payload === undefined ? '' : Buffer.isBuffer(f.request.payload) ? `<${f.request.payload.length} bytes: ${clip(f.request.payload.toString('latin1'), 80)}>` : clip(f.request.payload, 400)
  return [`[${f.request.kind}] ${f.request.method} ${clip(f.request.url, 300)}`, `headers: ${JSON.stringify(headers)}`,
    ...(payload === '' ? [] : [`body: ${payload}`]), `→ ${f.status} ${clip(f.body, 300)}`, ...f.log.map((line) => `log: ${clip(line, 1500)}`)].join('\n    ')
}

// ---------------------------------------------------------------- the sweep

t.test('no route answers 5xx to schema-valid or malformed input, every 4xx is the failure envelope, and no other organization sees this one\'s ids', async (t) => {
  // Nothing leaves the machine, and no answer waits on a resolver: the webhooks the sweep sends (to https://hooks.invalid/…) fail to resolve at once.
  const lookup = dns.promises.lookup
  const noDns = async () => { throw Object.assign(new Error('getaddrinfo ENOTFOUND (no DNS in the sweep)'), { code: 'ENOTFOUND' }) }
  Object.defineProperty(dns.promises, 'lookup', { value: noDns, configurable: true, writable: true })
  const future = new Date('2999-01-01T00:00:00Z') // the legacy export routes stay routed, so they are swept too
  const svc = await createTestApp(t, { config: { webhookTimeoutMs: 500, exportsLegacySunset: future, exportsLegacyReportsSunset: future } })
  const fixtures = await createFixtures(svc)
  // The same services behind a second app whose logger keeps what each request logs at error level (the stack of a 500).
  const logged: string[] = []
  const app: FastifyInstance = await buildApp({ ...svc.runtime, logger: pino({ level: 'error' }, { write: (line: string) => { logged.push(line.trim()) } }) })
  await app.ready()
  t.teardown(async () => {
    await app.close()
    await svc.close()
    Object.defineProperty(dns.promises, 'lookup', { value: lookup, configurable: true, writable: true })
  })

  const hintsWith = (realIdChance: number): Hints => ({
    idFor(name, rng) {
      const pool = fixtures.pools[poolKey(name)]
      return pool !== undefined && pool.length > 0 && rng.chance(realIdChance) ? rng.pick(pool) : undefined
    },
  })
  const [real, mostlyReal] = [hintsWith(1), hintsWith(0.8)]
  const doc = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json()
  const only = process.env['FUZZ_OPS'] === undefined ? null : new RegExp(process.env['FUZZ_OPS'])
  const order = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] // reads first and deletions last, so the fixtures live as long as possible
  const operations = operationsOf(doc).filter((op) => only === null || only.test(`${op.method} ${op.path}`))
    .sort((a, b) => order.indexOf(a.method) - order.indexOf(b.method))

  // Ids a member of the other organization must never be shown by a route that needs credentials (cities are everyone's reference data).
  const ownIds = Object.entries(fixtures.pools).filter(([pool]) => pool !== 'cities').flatMap(([, ids]) => ids)
  const findings: Finding[] = []
  const tally = new Map<string, number>()
  let sent = 0
  const send = async (op: Operation, request: Request): Promise<LightMyRequestResponse | null> => {
    logged.length = 0
    sent++
    let timer: NodeJS.Timeout | undefined
    let broken: string | undefined
    const answer = await Promise.race([
      app.inject({ method: request.method as 'GET', url: request.url, headers: request.headers, ...(request.payload === undefined ? {} : { payload: request.payload }) })
        .catch((error: unknown) => { broken = `the response broke off: ${String(error)}`; return null }),
      new Promise<null>((resolve) => { timer = setTimeout(() => resolve(null), ANSWER_WITHIN_MS) }),
    ]).finally(() => clearTimeout(timer))
    const status = answer?.statusCode ?? 0
    const key = `${request.kind.replace(/-.*$/, '')} ${Math.floor(status / 100)}xx`
    tally.set(key, (tally.get(key) ?? 0) + 1)
    if (process.env['FUZZ_DEBUG'] !== undefined && ['valid', 'edge'].includes(request.kind) && status >= 400) {
      console.error(`${request.kind} ${status} ${op.method} ${op.path} ${clip(answer?.body ?? '', 300)}`)
    }
    const problem = answer === null ? broken ?? `no answer within ${ANSWER_WITHIN_MS} ms`
      : request.kind === 'auth:foreign-member' && !op.public && status < 300 && ownIds.some((id) => answer.body.includes(id))
        ? `answered ${status} to a member of another organization with ids of this one`
        : problemOf(op, answer.statusCode, answer.body)
    if (problem !== null) findings.push({ operation: `${op.method} ${op.path}`, request, status, body: answer?.body ?? '', problem, log: [...logged] })
    return answer
  }

  const scoringModels = '/v1/organization/{entityid}/config/{configid}/scoring-model'
  const model: { [key: string]: Json } = JSON.parse(JSON.stringify(consumerModel))
  const knownBodies: Record<string, Json> = {
    [`POST ${scoringModels}`]: model,
    [`PUT ${scoringModels}/{id}`]: { ...model, version: '2.0', validFrom: '2030-01-01T00:00:00Z' },
    [`POST ${scoringModels}/{id}/evaluate`]: { fields: { age: 30, monthlyIncome: '3000000', employmentType: 'formal' } },
    'POST /v1/credit-lines': lineBody(),
    'POST /v1/profiles': { type: 'natural', natural: { firstName: 'Eva', lastName: 'Ruiz', documentType: 'CC', documentNumber: '52030405', email: 'eva@example.co' } },
  }
  const started = Date.now()
  const admin = { authorization: `Bearer ${svc.adminToken}` }
  for (const op of operations) {
    const rng = new Rng(SEED ^ hash(`${op.method} ${op.path}`))
    // Credentials: none, broken, a member of another organization, and the administrator in another organization.
    const base = validParts(op, rng, real)
    const foreignHeaders = Object.fromEntries(Object.entries(base.headers).map(([k, v]) => [k, k.endsWith('organization-id') ? fixtures.foreignOrganizationId : v]))
    const badToken = rng.pick(['Bearer nope', 'Basic Zm9vOmJhcg==', `Bearer ${'a'.repeat(5_000)}`, 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.', 'Bearer'])
    await send(op, build(op, base, 'auth:none', {}, uploadOf(op, rng)))
    await send(op, build(op, base, 'auth:bad-token', { authorization: badToken }, uploadOf(op, rng)))
    // A member of the other organization, acting in it (a stream of its own would not end: here, in this one), naming this organization's ids:
    // never shown them.
    const foreignMember = { authorization: `Bearer ${fixtures.foreignToken}` }
    await send(op, build(op, op.stream ? base : { ...base, headers: foreignHeaders }, 'auth:foreign-member', foreignMember, uploadOf(op, rng)))
    if (op.stream) continue // anything else opens an endless event stream
    await send(op, build(op, { ...base, headers: foreignHeaders }, 'auth:admin-in-foreign-organization', admin, uploadOf(op, rng)))
    // Schema-valid requests: a known good body first where random ones rarely pass the domain's checks, then half with every field
    // and real ids, half sparser and sometimes with unknown ids. The first one accepted is the template of the hostile requests.
    let template: Parts | undefined
    for (let k = 0; k < VALID_PER_OPERATION; k++) {
      const known = k === 0 ? knownBodies[`${op.method} ${op.path}`] : undefined
      const parts = known !== undefined ? { ...validParts(op, rng, real, 1), body: known }
        : k < VALID_PER_OPERATION / 2 ? validParts(op, rng, real, 1) : validParts(op, rng, mostlyReal)
      const answer = await send(op, build(op, parts, 'valid', admin, uploadOf(op, rng)))
      if (template === undefined && answer !== null && answer.statusCode < 300) template = parts
    }
    for (const request of hostileRequests(op, template ?? validParts(op, rng, real, 1), rng, admin)) await send(op, request)
  }
  t.comment(`${sent} requests over ${operations.length} operations in ${Date.now() - started} ms; answers by kind: ${[...tally].sort().map(([k, n]) => `${k} ${n}`).join(', ')}`)

  // One entry per distinct defect (same problem, same error and place), with the operations it hits and its first request in full.
  const groups = new Map<string, Finding[]>()
  for (const f of findings) groups.set(signatureOf(f), [...(groups.get(signatureOf(f)) ?? []), f])
  const report = [...groups].map(([signature, group]) => {
    const hit = [...new Set(group.map((f) => f.operation))]
    return `${signature}\n  ${group.length} requests on ${hit.length} operations: ${hit.slice(0, 6).join(', ')}${hit.length > 6 ? ', …' : ''}\n  first: ${describe(group[0] as Finding)}`
  })
  t.equal(findings.length, 0, `${findings.length} bad answers, ${groups.size} distinct: ${[...groups.keys()].join(' | ')}`, { findings: report })
})

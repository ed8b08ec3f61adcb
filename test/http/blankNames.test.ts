import type { LightMyRequestResponse } from 'fastify'
import t, { type Test } from 'tap'
import { builtInRoleTemplateId } from '../../src/commands/identity.js'
import { NON_BLANK_TEXT_PATTERN, PROSE_TEXT_PATTERN } from '../../src/http/schemas.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { createDebtor, lending, lineBody } from '../helpers/lending.js'
import { createProfile } from '../helpers/organizations.js'
import { consumerModel, scoringModelApi } from '../helpers/scoring.js'

type Send = (value: string) => Promise<LightMyRequestResponse>

/** Values that show nothing, or hide a control character. */
const BLANKS = [['only spaces', '   '], ['only a zero-width space', '\u200b'], ['a NUL inside', 'a\u0000b']] as const
/** Names and labels as people write them. */
const NAMES = ['José María', 'O\'Neil-Ñúñez', 'Andes Coffee Export S.A.S.'] as const
const MESSAGE = 'must contain a visible character and no control characters'

interface FieldError { field: string; message: string }

/** Each blank value gets 400 VALIDATION_ERROR naming `field` with the readable message, and no event is appended. */
const refusesBlanks = async (t: Test, svc: TestApp, field: string, send: Send, rule: { message: string; blanks: ReadonlyArray<readonly [string, string]> } = { message: MESSAGE, blanks: BLANKS }) => {
  const head = await svc.runtime.eventStore.headPosition()
  const MESSAGE = rule.message
  for (const [what, value] of rule.blanks) {
    const response = await send(value)
    t.equal(response.statusCode, 400, `${field}, ${what}: 400`)
    const body: { status: string; data: { code: string; message: string; errors: FieldError[] } } = response.json()
    t.equal(body.status, 'fail')
    t.equal(body.data.code, 'VALIDATION_ERROR')
    t.ok(body.data.errors.some((e) => e.field === field && e.message === MESSAGE), `${field}, ${what}: the error names the field (${response.body})`)
    t.match(body.data.message, `${field} ${MESSAGE}`)
    t.notMatch(body.data.message, /\\p\{/, 'the regex is not echoed')
  }
  t.equal(await svc.runtime.eventStore.headPosition(), head, `${field}: nothing appended`)
}

/** Each name is accepted with `status`, and the answer shows it as given (`shown` reads it back out of the answer). */
const acceptsNames = async (t: Test, status: number, send: Send, shown: (answer: LightMyRequestResponse) => unknown) => {
  for (const name of NAMES) {
    const response = await send(name)
    t.equal(response.statusCode, status, `${name}: ${response.statusCode === status ? 'accepted' : response.body}`)
    t.equal(shown(response), name)
  }
}

t.test('the pattern: a visible character somewhere, no control character anywhere, long text included', async (t) => {
  const pattern = new RegExp(NON_BLANK_TEXT_PATTERN, 'u')
  // Named by their code points: a raw line separator would break the TAP stream.
  const named = (text: string) => [...text].map((c) => `U+${(c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`).join(' ') || '(empty)'
  for (const refused of ['', ' ', '   ', '\u00a0', '\u3000', '\u200b', '\u200b\u200c\u200d\u2060', '\ufeff', '\u3164', '\u00ad', ' \u2028 ', '\t', 'a\u0000b', 'a\nb', 'a\u007f', 'a\u0085', 'Ana\u2028Luz', '\u2029Ana', 'Ana\u2029', 'a\ud800']) {
    t.notOk(pattern.test(refused), named(refused))
  }
  for (const accepted of [...NAMES, 'Ana', ' Ana ', 'Müller', 'Zoë d\'Arc', 'Ñ', '李小龙', 'v1.0 beta', '😀', '\u200bAna', 'Jose\u0301']) {
    t.ok(pattern.test(accepted), named(accepted))
  }
  t.notOk(pattern.test(' '.repeat(1_000_000)), 'a megabyte of spaces')
  t.notOk(pattern.test(`${' '.repeat(500_000)}${'a'.repeat(500_000)}\u0000`), 'a megabyte ending in NUL')
})

t.test('organization names: blank ones are refused on create and rename, nothing written; real names are kept', async (t) => {
  const svc = await createTestApp(t)
  const create = (name: string) => svc.call({ method: 'POST', url: '/v1/organizations', token: svc.adminToken, payload: { name } })
  const rename = (name: string) => svc.call({ method: 'PATCH', url: `/v1/organizations/${svc.organizationId}`, token: svc.adminToken, payload: { name } })
  const count = async () => (await svc.call({ method: 'GET', url: '/v1/organizations', token: svc.adminToken })).json().pagination.total_items
  const before = await count()
  await refusesBlanks(t, svc, 'body.name', create)
  await refusesBlanks(t, svc, 'body.name', rename)
  t.equal(await count(), before, 'no organization was added')
  const shown = (answer: LightMyRequestResponse) => answer.json().data.organization.name
  await acceptsNames(t, 201, create, shown)
  await acceptsNames(t, 200, rename, shown)
})

t.test('OAuth client names: blank ones are refused, nothing written; real names are kept', async (t) => {
  const svc = await createTestApp(t)
  const register = (name: string) => svc.call({
    method: 'POST', url: '/v1/oauth/clients', token: svc.adminToken,
    payload: { name, scopes: [], organizationId: svc.organizationId, roleTemplateId: builtInRoleTemplateId(svc.organizationId, 'analyst') },
  })
  await refusesBlanks(t, svc, 'body.name', register)
  await acceptsNames(t, 201, register, (answer) => answer.json().data.client.name)
})

t.test('webhook tags: blank ones are refused on create and update, nothing written; real tags are kept', async (t) => {
  const svc = await createTestApp(t)
  const call = (method: 'POST' | 'PUT', url: string, payload: object) =>
    svc.call({ method, url: `/v1${url}`, token: svc.adminToken, organizationId: svc.organizationId, payload })
  const create = (tag: string) => call('POST', '/webhook', { tag, url: 'https://erp.example.com/credits/{{ .Credit.ID }}' })
  const existing = await create('erp')
  t.equal(existing.statusCode, 201)
  const id: string = existing.json().data.ID
  const update = (tag: string) => call('PUT', `/webhook/${id}`, { tag })
  await refusesBlanks(t, svc, 'body.tag', create)
  await refusesBlanks(t, svc, 'body.tag', update)
  const list = await svc.call({ method: 'GET', url: '/v1/webhooks', token: svc.adminToken, organizationId: svc.organizationId })
  t.equal(list.json().pagination.total_items, 1, 'only the first webhook exists')
  t.equal((await svc.call({ method: 'GET', url: `/v1/webhook/${id}`, token: svc.adminToken, organizationId: svc.organizationId })).json().data.tag, 'erp', 'its tag unchanged')
  const shown = (answer: LightMyRequestResponse) => answer.json().data.tag
  await acceptsNames(t, 201, create, shown)
  await acceptsNames(t, 200, update, shown)
})

t.test('profile names: blank ones are refused on create and PATCH, nothing written; real names are kept and null still clears', async (t) => {
  const svc = await createTestApp(t)
  const headers = { 'config-organization-id': svc.organizationId, 'organization-id': svc.organizationId }
  const send = (method: 'POST' | 'PATCH' | 'GET', url: string, payload?: object) =>
    svc.call({ method, url: `/v1${url}`, token: svc.adminToken, headers, ...(payload === undefined ? {} : { payload }) })
  let documents = 10_000_000
  const natural = (fields: object) => ({ firstName: 'Ana', lastName: 'Gómez', documentType: 'CC', documentNumber: String(documents++), ...fields })
  const representative = (fields: object) => ({ firstName: 'Luis', lastName: 'Herrera', documentType: 'CC', documentNumber: '80123456', ...fields })
  const legal = (fields: object) => ({ businessName: 'Tienda Uno', documentType: 'NIT', documentNumber: String(900_000_000 + documents++), ...fields })
  const createNatural = (fields: object) => send('POST', '/profiles', { type: 'natural', natural: natural(fields) })
  const createLegal = (fields: object) => send('POST', '/profiles', { type: 'legal', legal: legal(fields) })
  const count = async () => (await send('GET', '/profiles')).json().meta.total

  const person = await createNatural({ middleName: 'Lucía', secondLastName: 'Restrepo' })
  const company = await createLegal({ legalRepresentative: representative({}) })
  t.equal(person.statusCode, 201)
  t.equal(company.statusCode, 201)
  const personId: string = person.json().data.ID
  const companyId: string = company.json().data.ID
  const before = await count()

  for (const field of ['firstName', 'middleName', 'lastName', 'secondLastName']) {
    await refusesBlanks(t, svc, `body.natural.${field}`, (value) => createNatural({ [field]: value }))
    await refusesBlanks(t, svc, `body.natural.${field}`, (value) => send('PATCH', `/profiles/${personId}`, { natural: { [field]: value } }))
  }
  await refusesBlanks(t, svc, 'body.legal.businessName', (value) => createLegal({ businessName: value }))
  await refusesBlanks(t, svc, 'body.legal.businessName', (value) => send('PATCH', `/profiles/${companyId}`, { legal: { businessName: value } }))
  for (const field of ['firstName', 'lastName']) {
    await refusesBlanks(t, svc, `body.legal.legalRepresentative.${field}`, (value) => createLegal({ legalRepresentative: representative({ [field]: value }) }))
    await refusesBlanks(t, svc, `body.legal.legalRepresentative.${field}`,
      (value) => send('PATCH', `/profiles/${companyId}`, { legal: { legalRepresentative: representative({ [field]: value }) } }))
  }
  t.equal(await count(), before, 'no profile was added')
  t.match((await send('GET', `/profiles/${personId}`)).json().data.natural, { firstName: 'Ana', middleName: 'Lucía', lastName: 'Gómez', secondLastName: 'Restrepo' }, 'unchanged')

  const everyName = (name: string) => ({ firstName: name, middleName: name, lastName: name, secondLastName: name })
  await acceptsNames(t, 201, (name) => createNatural(everyName(name)), (answer) => answer.json().data.natural.secondLastName)
  await acceptsNames(t, 201, (name) => createLegal({ businessName: name, legalRepresentative: representative({ firstName: name, lastName: name }) }),
    (answer) => answer.json().data.legal.businessName)
  await acceptsNames(t, 200, (name) => send('PATCH', `/profiles/${personId}`, { natural: everyName(name) }), (answer) => answer.json().data.natural.firstName)
  await acceptsNames(t, 200, (name) => send('PATCH', `/profiles/${companyId}`, { legal: { businessName: name, legalRepresentative: representative({ lastName: name }) } }),
    (answer) => answer.json().data.legal.legalRepresentative.lastName)

  const cleared = await send('PATCH', `/profiles/${personId}`, { natural: { middleName: null, secondLastName: null } })
  t.equal(cleared.statusCode, 200, 'null still clears an optional name')
  t.notOk('middleName' in cleared.json().data.natural)
  t.notOk('secondLastName' in cleared.json().data.natural)
})

t.test('a profile recorded with a blank name before the rule still reads, and takes other changes', async (t) => {
  const svc = await createTestApp(t)
  const headers = { 'config-organization-id': svc.organizationId, 'organization-id': svc.organizationId }
  const id = await createProfile(svc, svc.organizationId, { natural: { firstName: '   ', lastName: '\u200b', documentType: 'CC', documentNumber: '1020304050' } })
  const read = await svc.call({ method: 'GET', url: `/v1/profiles/${id}`, token: svc.adminToken, headers })
  t.equal(read.statusCode, 200, read.body)
  t.match(read.json().data.natural, { firstName: '   ', lastName: '\u200b' })
  const listed = await svc.call({ method: 'GET', url: '/v1/profiles?expand=natural', token: svc.adminToken, headers })
  t.equal(listed.statusCode, 200, listed.body)
  const patched = await svc.call({ method: 'PATCH', url: `/v1/profiles/${id}`, token: svc.adminToken, headers, payload: { natural: { firstName: 'Ana' } } })
  t.equal(patched.statusCode, 200, patched.body)
  t.match(patched.json().data.natural, { firstName: 'Ana', lastName: '\u200b' })
})

t.test('scoring model names and version labels: blank ones are refused on create and new version, nothing written; real ones are kept', async (t) => {
  const { svc, base, call } = await scoringModelApi(t)
  const create = (fields: object) => call({ method: 'POST', url: base, payload: { ...consumerModel, ...fields } })
  const existing = await create({})
  t.equal(existing.statusCode, 201)
  const id: string = existing.json().data.ID
  let revision = 2
  const revise = (fields: object) => call({ method: 'PUT', url: `${base}/${id}`, payload: { ...consumerModel, version: `${revision++}.0`, ...fields } })
  const count = async () => (await call({ method: 'GET', url: base })).json().pagination.total_items

  for (const field of ['name', 'version']) {
    await refusesBlanks(t, svc, `body.${field}`, (value) => create({ [field]: value }))
    await refusesBlanks(t, svc, `body.${field}`, (value) => revise({ [field]: value }))
  }
  t.equal(await count(), 1, 'no model was added')
  t.match((await call({ method: 'GET', url: `${base}/${id}` })).json().data, { name: consumerModel.name, versionNumber: 1 }, 'no version was added')

  await acceptsNames(t, 201, (name) => create({ name, version: name }), (answer) => answer.json().data.version)
  await acceptsNames(t, 200, (name) => revise({ name, version: name }), (answer) => answer.json().data.version)
  t.equal((await call({ method: 'GET', url: `${base}/${id}` })).json().data.name, NAMES[NAMES.length - 1])
})

t.test('credit line names: blank ones are refused on create and PATCH, nothing written; real names are kept', async (t) => {
  const svc = await createTestApp(t)
  const l = await lending(svc)
  const id = await l.createLine()
  const create = (name: string) => l.call('POST', '/v1/credit-lines', lineBody({ name }))
  const rename = (name: string) => l.call('PATCH', `/v1/credit-lines/${id}`, { name })
  await refusesBlanks(t, svc, 'body.name', create)
  await refusesBlanks(t, svc, 'body.name', rename)
  const shown = (answer: LightMyRequestResponse) => answer.json().data.creditLine.name
  await acceptsNames(t, 201, create, shown)
  await acceptsNames(t, 200, rename, shown)
})

t.test('tax and role-template names: blank ones are refused, a zero-width space or a NUL too, nothing written', async (t) => {
  const svc = await createTestApp(t)
  const tax = (name: string) => svc.call({
    method: 'POST', url: '/v1/taxes', token: svc.adminToken, organizationId: svc.organizationId,
    payload: { name, percentage: 19, type: 'VAT', applies_to: ['FEE'] },
  })
  const template = (name: string) => svc.call({
    method: 'POST', url: `/v1/organization/${svc.organizationId}/role-template`, token: svc.adminToken, payload: { name, permissions: ['ReadCredit'] },
  })
  await refusesBlanks(t, svc, 'body.name', tax)
  await refusesBlanks(t, svc, 'body.name', template)
  await acceptsNames(t, 201, tax, (answer) => answer.json().data.name)
})

const PROSE_MESSAGE = 'must contain a visible character and no control characters but tabs and line breaks'
/** Reasons that show nothing, or hide a control character other than a tab or a line break. */
const BLANK_REASONS = [...BLANKS, ['only line breaks and tabs', '\n\t\r\n'], ['an escape inside', 'see\u001b[31m OPS']] as const
const REASON = 'Fraude confirmado.\nVer el caso OPS-1234:\t«firma de otra persona».'

t.test('the prose pattern: a visible character somewhere, tabs and line breaks anywhere, no other control character', async (t) => {
  const pattern = new RegExp(PROSE_TEXT_PATTERN, 'u')
  for (const [what, refused] of [...BLANK_REASONS, ['empty', ''], ['a lone surrogate', 'a\ud800'], ['DEL', 'a\u007f']]) t.notOk(pattern.test(refused), what)
  // Named, not shown: a raw line separator would break the TAP stream.
  for (const [what, accepted] of [['lines and a tab', REASON], ['a leading line feed', '\nAna'], ['a line separator', 'Ana\u2028Luz'],
    ['a list', '\t- duplicated\r\n- blurred'], ...NAMES.map((name) => [name, name])]) t.ok(pattern.test(accepted), what)
  t.notOk(pattern.test(`${'\n'.repeat(500_000)}${'a'.repeat(500_000)}\u0000`), 'a megabyte ending in NUL')
})

t.test('reasons (organization and profile deactivation, credit rejection and cancellation, order rejection): blank ones refused, nothing written; line breaks kept', async (t) => {
  const svc = await createTestApp(t)
  const l = await lending(svc)
  const rule = { message: PROSE_MESSAGE, blanks: BLANK_REASONS }
  const post = (url: string) => (reason: string) => svc.call({
    method: 'POST', url, token: svc.adminToken, organizationId: svc.organizationId, headers: { 'config-organization-id': svc.organizationId }, payload: { reason },
  })
  const requested = await l.requestCredit({ creditLineId: await l.createLine(), debtorId: await createDebtor(svc.runtime, svc.organizationId) })
  const disbursed = await l.disbursedCredit()
  const installment = disbursed.installments[0]?.ID ?? ''
  const orders = `/v1/payables/${disbursed.ID}/installments/${installment}/orders`
  const order = (await l.call('POST', orders, { Key: 'reasons' })).json().order
  const profileId = await createProfile(svc, svc.organizationId, { natural: { firstName: 'Ana', lastName: 'Gómez', documentType: 'CC', documentNumber: '1020304051' } })
  const routes = {
    'credit rejection': post(`/v1/credits/${requested.ID}/reject`),
    'order rejection': post(`${orders}/${order.ID}/reject`),
    'profile deactivation': post(`/v1/profiles/${profileId}/deactivate`),
    'organization deactivation': post(`/v1/organizations/${svc.organizationId}/deactivate`),
  }
  for (const send of Object.values(routes)) await refusesBlanks(t, svc, 'body.reason', send, rule)
  const cancelled = await l.requestCredit({ creditLineId: await l.createLine(), debtorId: await createDebtor(svc.runtime, svc.organizationId) })
  await refusesBlanks(t, svc, 'body.reason', post(`/v1/credits/${cancelled.ID}/cancel`), rule)
  t.equal((await post(`/v1/credits/${cancelled.ID}/cancel`)(REASON)).statusCode, 200, 'credit cancellation')
  for (const [what, send] of Object.entries(routes)) t.equal((await send(REASON)).statusCode, 200, `${what}: a reason over lines, with a tab`)
  const events = []
  for await (const event of svc.runtime.eventStore.readAll()) if (event.type === 'CreditRejected' || event.type === 'OrganizationDeactivated') events.push(event.data)
  t.match(events, [{ reason: REASON }, { reason: REASON }], 'recorded as given')
})

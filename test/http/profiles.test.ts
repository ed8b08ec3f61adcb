import t from 'tap'
import { ManualClock } from '../../src/shared/clock.js'
import { deterministicId } from '../../src/shared/ids.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { addMember, createOrganization } from '../helpers/members.js'

interface ProfileBody {
  ID: string
  type: string
  entityID: string
  isCopy: boolean
  copiedFromID: string | null
  active: boolean
  ownerID: string
  natural?: Record<string, unknown> | null
  legal?: Record<string, unknown> | null
  entity?: { ID: string; name: string }
  city?: { name: string; daneCode: number } | null
  files?: Array<{ field: string; fileId: string }>
  sharedWith?: string[]
}

const medellin = deterministicId('city', '05001')

const ana = {
  firstName: 'Ana', lastName: 'Gómez', documentType: 'CC', documentNumber: '1020304050', birthDate: '1990-04-12', email: 'ana@example.co',
  phone: '+573001234567', cityId: medellin, monthlyIncome: '4500000.00', employmentType: 'formal', employerName: 'Café del Valle S.A.S.',
}
const andes = {
  businessName: 'Andes Coffee Export S.A.S.', documentType: 'NIT', documentNumber: '900123456', taxId: '900123456-7', incorporationDate: '2012-06-15',
  legalRepresentative: { firstName: 'Luis', lastName: 'Herrera', documentType: 'CC', documentNumber: '80123456' },
}

const headersFor = (organizationId: string) => ({ 'config-organization-id': organizationId, 'organization-id': organizationId })

/** Calls the profile API in an organization with both headers, as the interface asks. */
const profilesApi = (svc: TestApp, organizationId: string) => ({
  create: (token: string, payload: object) => svc.call({ method: 'POST', url: '/v1/profiles', token, headers: headersFor(organizationId), payload }),
  list: (token: string, query = '') => svc.call({ method: 'GET', url: `/v1/profiles${query}`, token, headers: headersFor(organizationId) }),
  get: (token: string, id: string) => svc.call({ method: 'GET', url: `/v1/profiles/${id}`, token, headers: headersFor(organizationId) }),
  send: (token: string, method: 'POST' | 'PATCH' | 'DELETE', path: string, payload?: object) =>
    svc.call({ method, url: `/v1/profiles${path}`, token, headers: headersFor(organizationId), ...(payload === undefined ? {} : { payload }) }),
})

const created = async (response: { statusCode: number; body: string; json(): unknown }): Promise<ProfileBody> => {
  if (response.statusCode !== 201) throw new Error(`expected 201, got ${response.statusCode}: ${response.body}`)
  const body = response.json() as { data: ProfileBody }
  return body.data
}

t.test('creating natural and legal profiles: minimal and full bodies, the creator is the owner', async (t) => {
  const svc = await createTestApp(t)
  const api = profilesApi(svc, svc.organizationId)
  const minimal = await api.create(svc.adminToken, { type: 'natural', natural: { firstName: 'Eva', lastName: 'Ruiz', documentType: 'CC', documentNumber: '123456' } })
  t.equal(minimal.statusCode, 201)
  t.match(minimal.json(), { message: 'profile created', data: { type: 'natural', entityID: svc.organizationId, isCopy: false, active: true, ownerID: 'test-admin' } })

  const full = await created(await api.create(svc.adminToken, { type: 'natural', natural: ana }))
  t.match(full.natural, { ...ana, age: Number })
  t.same(full.city?.name, 'Medellín', 'the city is expanded on a single-profile answer')
  t.equal(full.legal, null)

  const legal = await created(await api.create(svc.adminToken, { type: 'legal', legal: andes }))
  t.match(legal.legal, andes)
  t.equal(legal.natural, null)
  const minimalLegal = await api.create(svc.adminToken, { type: 'legal', legal: { businessName: 'Tienda Uno', documentType: 'NIT', documentNumber: '901000001' } })
  t.equal(minimalLegal.statusCode, 201)
})

t.test('profile bodies are validated field by field', async (t) => {
  const svc = await createTestApp(t)
  const api = profilesApi(svc, svc.organizationId)
  const refused = async (payload: object, field: string, why: string) => {
    const response = await api.create(svc.adminToken, payload)
    t.equal(response.statusCode, 400, why)
    const fields = (response.json() as { data: { errors?: Array<{ field: string }> } }).data.errors?.map((e) => e.field) ?? []
    t.ok(fields.some((f) => f.startsWith(field)), `${why}: names ${field} (got ${fields.join(', ')})`)
  }
  await refused({ type: 'natural', natural: { ...ana, documentType: 'XX' } }, 'body', 'unknown document type')
  await refused({ type: 'natural', natural: { firstName: 'Ana', documentType: 'CC', documentNumber: '1' } }, 'body', 'missing last name, short document number')
  await refused({ type: 'natural', natural: { ...ana, monthlyIncome: '-5' } }, 'body', 'negative income')
  await refused({ type: 'natural', natural: { ...ana, employmentType: 'astronaut' } }, 'body', 'unknown employment type')
  await refused({ type: 'natural', natural: { ...ana, birthDate: '2999-01-01' } }, 'body.natural.birthDate', 'birth date in the future')
  await refused({ type: 'natural', natural: { ...ana, cityId: deterministicId('city', '99999') } }, 'body.natural.cityId', 'unknown city')
  await refused({ type: 'natural', natural: ana, legal: andes }, 'body', 'a legal sub-object on a natural profile')
  await refused({ type: 'legal', legal: { ...andes, taxId: '900123456' } }, 'body', 'a NIT without verification digit')
  await refused({ type: 'natural', natural: { ...ana, nickname: 'Anita' } }, 'body', 'an unknown field')
  t.equal((await api.list(svc.adminToken)).json().meta.total, 0, 'nothing was created')
})

t.test('a bad field of one person type reports errors of that type only; a missing or unknown type is one error on body.type', async (t) => {
  const svc = await createTestApp(t)
  const api = profilesApi(svc, svc.organizationId)
  const errorsOf = async (payload: unknown) => {
    const head = await svc.runtime.eventStore.headPosition()
    const response = await api.create(svc.adminToken, payload as object)
    t.equal(response.statusCode, 400, JSON.stringify(payload).slice(0, 80))
    t.equal(await svc.runtime.eventStore.headPosition(), head, 'nothing appended')
    const body = response.json() as { data: { code: string; message: string; errors: Array<{ field: string; message: string }> } }
    t.equal(body.data.code, 'VALIDATION_ERROR')
    t.equal(body.data.message, body.data.errors.map((e) => `${e.field} ${e.message}`).join('; '), 'the message lists the same errors')
    return body.data.errors
  }
  t.same(await errorsOf({ type: 'natural', natural: { ...ana, email: 'not-an-email' } }),
    [{ field: 'body.natural.email', message: 'must match format "email"' }], 'a bad natural field alone: no body.legal, no anyOf')
  t.same(await errorsOf({ type: 'legal', legal: { ...andes, email: 'not-an-email' } }),
    [{ field: 'body.legal.email', message: 'must match format "email"' }], 'and a bad legal field alone')
  t.same([...new Set((await errorsOf({ type: 'natural', natural: { ...ana, firstName: '' } })).map((e) => e.field))], ['body.natural.firstName'],
    'an empty first name (the audit\'s case) names the first name only')
  const lastNameMissing = await errorsOf({ type: 'natural', natural: { firstName: 'Ana', documentType: 'CC', documentNumber: '1020304050' } })
  t.same(lastNameMissing, [{ field: 'body.natural.lastName', message: 'is required' }])
  t.same(await errorsOf({ type: 'legal', legal: { documentType: 'NIT', documentNumber: '900123456' } }),
    [{ field: 'body.legal.businessName', message: 'is required' }])
  t.same(await errorsOf({ type: 'natural', natural: ana, legal: andes }), [{ field: 'body.legal', message: 'is not an allowed field' }],
    'the other sub-object is refused as a field the type does not take')
  t.same(await errorsOf({ type: 'natural', legal: andes }),
    [{ field: 'body.natural', message: 'is required' }, { field: 'body.legal', message: 'is not an allowed field' }], 'the type decides which sub-object is required')
  t.same(await errorsOf({ type: 'legal', natural: ana }),
    [{ field: 'body.legal', message: 'is required' }, { field: 'body.natural', message: 'is not an allowed field' }])

  for (const [payload, why] of [[{ natural: ana }, 'no type'], [{}, 'an empty body']] as const) {
    t.same(await errorsOf(payload), [{ field: 'body.type', message: 'is required' }], why)
  }
  for (const type of ['robot', 'Natural', '', 1, null, true, ['natural'], { natural: true }]) {
    t.same(await errorsOf({ type, natural: ana }), [{ field: 'body.type', message: 'must be one of natural, legal' }], `type ${JSON.stringify(type)}`)
  }
  t.same(await errorsOf([]), [{ field: 'body', message: 'must be object' }], 'a body that is no object says so')
  t.equal((await api.list(svc.adminToken)).json().meta.total, 0, 'nothing was created')
})

t.test('the OpenAPI document describes the creation body as a oneOf discriminated by type', async (t) => {
  const svc = await createTestApp(t)
  const doc = (await svc.call({ method: 'GET', url: '/v1/openapi.json' })).json()
  const schema = doc.paths['/v1/profiles'].post.requestBody.content['application/json'].schema
  t.match(schema, { type: 'object', discriminator: { propertyName: 'type' } })
  t.notOk('anyOf' in schema)
  t.same(schema.oneOf.map((branch: { properties: Record<string, unknown>; required: string[]; additionalProperties: boolean }) =>
    [Object.keys(branch.properties), branch.required, branch.additionalProperties]), [[['type', 'natural'], ['type', 'natural'], false], [['type', 'legal'], ['type', 'legal'], false]])
  t.match(schema.oneOf[0].properties.type, { enum: ['natural'] })
  t.match(schema.oneOf[1].properties.type, { enum: ['legal'] })
  t.match(schema.oneOf[0].properties.natural.required, ['firstName', 'lastName', 'documentType', 'documentNumber'])
})

t.test('GET /profiles: both organization headers are required and the permission ReadProfile', async (t) => {
  const svc = await createTestApp(t)
  const only = await svc.call({ method: 'GET', url: '/v1/profiles', token: svc.adminToken, organizationId: svc.organizationId })
  t.equal(only.statusCode, 400, 'Organization-ID alone is not enough')
  const noAuth = await svc.call({ method: 'GET', url: '/v1/profiles', headers: headersFor(svc.organizationId) })
  t.equal(noAuth.statusCode, 401)
  const noPermission = await addMember(svc, svc.organizationId, 'nobody', ['ReadCredit'])
  const forbidden = await profilesApi(svc, svc.organizationId).list(noPermission.token)
  t.equal(forbidden.statusCode, 403)
  t.equal(forbidden.json().data.permission, 'ReadProfile')
})

t.test('GET /profiles: type, status, expand and paging, each with its bounds', async (t) => {
  const svc = await createTestApp(t)
  const api = profilesApi(svc, svc.organizationId)
  const natural = await created(await api.create(svc.adminToken, { type: 'natural', natural: ana }))
  await created(await api.create(svc.adminToken, { type: 'natural', natural: { ...ana, firstName: 'Bea', documentNumber: '555666777' } }))
  const legal = await created(await api.create(svc.adminToken, { type: 'legal', legal: andes }))
  t.equal((await api.send(svc.adminToken, 'POST', `/${natural.ID}/deactivate`, { reason: 'duplicate' })).statusCode, 200)

  const all = await api.list(svc.adminToken)
  t.equal(all.statusCode, 200)
  t.same(all.json().meta, { total: 3, natural_count: 2, legal_count: 1, shared_count: 0, page: 1, limit: 100 })
  t.equal(all.json().message, 'profiles')
  const first = all.json().data[0]
  t.same(Object.keys(first).sort(), ['ID', 'active', 'copiedFromID', 'createdAt', 'entityID', 'isCopy', 'ownerID', 'type', 'updatedAt'],
    'without expand: the base fields only')

  const naturals = await api.list(svc.adminToken, '?type=1')
  t.same(naturals.json().data.map((p: ProfileBody) => p.type), ['natural', 'natural'])
  t.same(naturals.json().meta, { total: 2, natural_count: 2, legal_count: 0, shared_count: 0, page: 1, limit: 100 })
  t.same((await api.list(svc.adminToken, '?type=2')).json().data.map((p: ProfileBody) => p.ID), [legal.ID])
  t.equal((await api.list(svc.adminToken, '?type=3')).statusCode, 400, 'type is 1 or 2')
  t.equal((await api.list(svc.adminToken, '?type=natural')).statusCode, 400)
  for (const spelt of ['1e0', '1.0', '1.']) t.equal((await api.list(svc.adminToken, `?type=${spelt}`)).statusCode, 400, `type=${spelt}: digits alone`)

  t.same((await api.list(svc.adminToken, '?status=false')).json().data.map((p: ProfileBody) => p.ID), [natural.ID], 'inactive only')
  t.equal((await api.list(svc.adminToken, '?status=true')).json().meta.total, 2, 'active only')
  t.equal((await api.list(svc.adminToken, '?status=maybe')).statusCode, 400)

  const expanded = await api.list(svc.adminToken, `?type=1&status=true&expand=natural,entity&expand=city`)
  const one: ProfileBody = expanded.json().data[0]
  t.match(one.natural, { firstName: 'Bea', monthlyIncome: '4500000.00', employmentType: 'formal', birthDate: '1990-04-12', age: Number })
  t.match(one.entity, { ID: svc.organizationId, name: String })
  t.match(one.city, { name: 'Medellín', daneCode: 5001, state: { name: 'Antioquia', daneCode: 5 } })
  t.notOk('legal' in one, 'legal was not asked for')
  const legalExpanded: ProfileBody = (await api.list(svc.adminToken, '?type=2&expand=legal&expand=natural')).json().data[0]
  t.match(legalExpanded.legal, { businessName: 'Andes Coffee Export S.A.S.', taxId: '900123456-7' })
  t.equal(legalExpanded.natural, null, 'a legal profile has no natural object')
  t.equal((await api.list(svc.adminToken, '?expand=everything')).statusCode, 400)

  const paged = await api.list(svc.adminToken, '?limit=2&page=2')
  t.equal(paged.json().data.length, 1)
  t.equal(paged.json().meta.total, 3, 'meta counts every page')
  for (const bad of ['limit=0', 'limit=101', 'page=0', 'shared=perhaps', 'unknown=1']) {
    t.equal((await api.list(svc.adminToken, `?${bad}`)).statusCode, 400, `${bad} is refused`)
  }
})

t.test('profiles created at one instant are listed newest first, as the others are', async (t) => {
  const svc = await createTestApp(t, { clock: new ManualClock('2026-05-04T10:00:00.000Z'), config: { accessTokenTtl: 10 * 365 * 86_400 } })
  const api = profilesApi(svc, svc.organizationId)
  const ids: string[] = []
  for (const documentNumber of ['111', '222', '333', '444']) {
    ids.push((await created(await api.create(svc.adminToken, { type: 'natural', natural: { ...ana, documentNumber } }))).ID)
  }
  const pages = [await api.list(svc.adminToken, '?limit=3'), await api.list(svc.adminToken, '?limit=3&page=2')]
  t.same(pages.flatMap((page) => page.json().data.map((p: ProfileBody) => p.ID)), [...ids].reverse())
  t.same(new Set(pages.flatMap((page) => page.json().data.map((p: { createdAt: string }) => p.createdAt))), new Set(['2026-05-04T10:00:00.000Z']))
})

t.test('visibility: own profiles, shared ones on request, everything for administrators, nothing of another organization', async (t) => {
  const svc = await createTestApp(t)
  const api = profilesApi(svc, svc.organizationId)
  const writer: ReadonlyArray<'ReadProfile' | 'WriteProfile'> = ['ReadProfile', 'WriteProfile']
  const carla = await addMember(svc, svc.organizationId, 'carla', writer)
  const dario = await addMember(svc, svc.organizationId, 'dario', writer)
  const orgAdmin = await addMember(svc, svc.organizationId, 'boss', ['ReadProfile', 'AdministerOrganization'])
  const carlas = await created(await api.create(carla.token, { type: 'natural', natural: ana }))
  const darios = await created(await api.create(dario.token, { type: 'legal', legal: andes }))

  t.same((await api.list(carla.token)).json().data.map((p: ProfileBody) => p.ID), [carlas.ID], 'only her own')
  t.equal((await api.get(carla.token, darios.ID)).statusCode, 404, 'another user\'s profile is not found')

  const share = await api.send(dario.token, 'POST', `/${darios.ID}/shares`, { userId: carla.userId })
  t.equal(share.statusCode, 201)
  t.same(share.json().data.sharedWith, [carla.userId])
  t.same((await api.list(carla.token)).json().data.map((p: ProfileBody) => p.ID), [carlas.ID], 'shared=false (default) leaves shared ones out')
  const withShared = await api.list(carla.token, '?shared=true')
  t.same(withShared.json().data.map((p: ProfileBody) => p.ID).sort(), [carlas.ID, darios.ID].sort())
  t.same(withShared.json().meta, { total: 2, natural_count: 1, legal_count: 1, shared_count: 1, page: 1, limit: 100 })
  t.equal((await api.get(carla.token, darios.ID)).statusCode, 200, 'a shared profile can be read')
  const patched = await api.send(carla.token, 'PATCH', `/${darios.ID}`, { legal: { tradeName: 'Andes' } })
  t.equal(patched.statusCode, 200, 'and changed, with WriteProfile')
  t.equal((await api.send(carla.token, 'POST', `/${darios.ID}/deactivate`, { reason: 'x' })).statusCode, 403, 'but not deactivated: that is the owner\'s')
  t.equal((await api.send(carla.token, 'POST', `/${darios.ID}/shares`, { userId: orgAdmin.userId })).statusCode, 403, 'nor shared further')

  const adminView = await api.list(orgAdmin.token)
  t.equal(adminView.json().meta.total, 2, 'an administrator sees the organization\'s profiles')

  const unshare = await api.send(dario.token, 'DELETE', `/${darios.ID}/shares/${carla.userId}`)
  t.equal(unshare.statusCode, 200)
  t.equal((await api.get(carla.token, darios.ID)).statusCode, 404, 'unsharing takes the sight away')
  t.equal((await api.send(dario.token, 'DELETE', `/${darios.ID}/shares/${carla.userId}`)).statusCode, 404, 'no such share any more')

  const other = await createOrganization(svc, 'Other lender')
  const foreign = await created(await profilesApi(svc, other).create(svc.adminToken, { type: 'natural', natural: ana }))
  t.equal((await api.get(svc.adminToken, foreign.ID)).statusCode, 404, 'another organization\'s profile is a 404, even for the platform administrator')
  t.equal((await api.send(svc.adminToken, 'PATCH', `/${foreign.ID}`, { natural: { firstName: 'X' } })).statusCode, 404)
  t.notOk((await api.list(svc.adminToken)).json().data.some((p: ProfileBody) => p.ID === foreign.ID))
  const stranger = await profilesApi(svc, other).list(carla.token)
  t.equal(stranger.statusCode, 403, 'a non-member cannot act in the other organization')

  const outsider = await addMember(svc, other, 'outsider', ['ReadProfile'])
  const shareOutside = await api.send(dario.token, 'POST', `/${darios.ID}/shares`, { userId: outsider.userId })
  t.equal(shareOutside.statusCode, 400, 'profiles are shared within the organization only')
})

t.test('PATCH changes only the fields sent and refuses the other person type', async (t) => {
  const svc = await createTestApp(t)
  const api = profilesApi(svc, svc.organizationId)
  const profile = await created(await api.create(svc.adminToken, { type: 'natural', natural: ana }))
  const patched = await api.send(svc.adminToken, 'PATCH', `/${profile.ID}`, { natural: { monthlyIncome: '5200000.50', employmentType: 'independent' } })
  t.equal(patched.statusCode, 200)
  t.match(patched.json(), { message: 'profile updated', data: { natural: { ...ana, monthlyIncome: '5200000.50', employmentType: 'independent' } } })
  t.equal((await api.send(svc.adminToken, 'PATCH', `/${profile.ID}`, { legal: { businessName: 'X' } })).statusCode, 400)
  t.equal((await api.send(svc.adminToken, 'PATCH', `/${profile.ID}`, {})).statusCode, 400, 'an empty change')
  t.equal((await api.send(svc.adminToken, 'PATCH', `/${profile.ID}`, { natural: { birthDate: '2999-12-31' } })).statusCode, 400)
  t.equal((await api.send(svc.adminToken, 'PATCH', `/${deterministicId('nope')}`, { natural: { firstName: 'X' } })).statusCode, 404)
  t.match((await api.get(svc.adminToken, profile.ID)).json().data.natural, { monthlyIncome: '5200000.50' }, 'refusals changed nothing')
})

t.test('activation and deactivation by the owner or an administrator', async (t) => {
  const svc = await createTestApp(t)
  const api = profilesApi(svc, svc.organizationId)
  const owner = await addMember(svc, svc.organizationId, 'owner', ['ReadProfile', 'WriteProfile'])
  const profile = await created(await api.create(owner.token, { type: 'natural', natural: ana }))
  const off = await api.send(owner.token, 'POST', `/${profile.ID}/deactivate`, { reason: 'debtor asked to be removed' })
  t.match(off.json(), { message: 'profile deactivated', data: { active: false, deactivationReason: 'debtor asked to be removed' } })
  t.equal((await api.send(owner.token, 'POST', `/${profile.ID}/deactivate`, { reason: '' })).statusCode, 400, 'a reason is required')
  const on = await api.send(svc.adminToken, 'POST', `/${profile.ID}/activate`)
  t.match(on.json(), { data: { active: true, deactivationReason: null } }, 'an administrator may activate another\'s profile')
})

t.test('copies: into another organization, independent, marked, carrying the source\'s data', async (t) => {
  const svc = await createTestApp(t)
  const api = profilesApi(svc, svc.organizationId)
  const source = await created(await api.create(svc.adminToken, { type: 'natural', natural: ana }))
  const other = await createOrganization(svc, 'Second lender')
  const copy = await api.send(svc.adminToken, 'POST', `/${source.ID}/copy`, { organizationId: other })
  t.equal(copy.statusCode, 201)
  const copied: ProfileBody = copy.json().data
  t.match(copied, { isCopy: true, copiedFromID: source.ID, entityID: other, natural: { firstName: 'Ana', documentNumber: '1020304050' } })
  t.not(copied.ID, source.ID)
  await profilesApi(svc, other).send(svc.adminToken, 'PATCH', `/${copied.ID}`, { natural: { firstName: 'Ana María' } })
  t.match((await api.get(svc.adminToken, source.ID)).json().data.natural, { firstName: 'Ana' }, 'the source does not follow the copy')

  const member = await addMember(svc, svc.organizationId, 'member', ['ReadProfile', 'WriteProfile'])
  const own = await created(await api.create(member.token, { type: 'natural', natural: ana }))
  const refused = await api.send(member.token, 'POST', `/${own.ID}/copy`, { organizationId: other })
  t.equal(refused.statusCode, 403, 'copying needs membership with WriteProfile in the target organization')
  const sameOrganization = await api.send(member.token, 'POST', `/${own.ID}/copy`, {})
  t.match(sameOrganization.json(), { data: { isCopy: true, entityID: svc.organizationId, ownerID: member.userId } })
})

t.test('an inactive profile is not copied, by anyone who sees it: a copy would be the same person active again', async (t) => {
  const svc = await createTestApp(t)
  const api = profilesApi(svc, svc.organizationId)
  const owner = await addMember(svc, svc.organizationId, 'owner', ['ReadProfile', 'WriteProfile'])
  const reader = await addMember(svc, svc.organizationId, 'reader', ['ReadProfile', 'WriteProfile'])
  const profile = await created(await api.create(owner.token, { type: 'natural', natural: ana }))
  t.equal((await api.send(owner.token, 'POST', `/${profile.ID}/shares`, { userId: reader.userId })).statusCode, 201)
  t.equal((await api.send(owner.token, 'POST', `/${profile.ID}/deactivate`, { reason: 'fraud suspected' })).statusCode, 200)
  const count = async () => (await api.list(svc.adminToken)).json().meta.total
  const before = await count()
  for (const token of [reader.token, owner.token, svc.adminToken]) {
    const copy = await api.send(token, 'POST', `/${profile.ID}/copy`, {})
    t.equal(copy.statusCode, 409)
    t.match(copy.json(), { status: 'fail', data: { code: 'NOT_ACTIVE', profileId: profile.ID } })
  }
  t.equal(await count(), before, 'no profile made')
  t.equal((await api.send(owner.token, 'POST', `/${profile.ID}/activate`)).statusCode, 200)
  t.equal((await api.send(reader.token, 'POST', `/${profile.ID}/copy`, {})).statusCode, 201, 'copied once active again')
})

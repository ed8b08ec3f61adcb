import t from 'tap'
import { keyedProfileId } from '../../src/commands/profile.js'
import { deterministicId } from '../../src/shared/ids.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { addMember, createOrganization } from '../helpers/members.js'

const medellin = deterministicId('city', '05001')

const ana = {
  firstName: 'Ana', lastName: 'Gómez', documentType: 'CC', documentNumber: '1020304050', birthDate: '1990-04-12', email: 'ana@example.co',
  phone: '+573001234567', cityId: medellin, monthlyIncome: '4500000', employmentType: 'formal', employerName: 'Café del Valle S.A.S.',
}
const andes = {
  businessName: 'Andes Coffee Export S.A.S.', documentType: 'NIT', documentNumber: '900123456', taxId: '900123456-7', monthlyIncome: '120000000.5',
  legalRepresentative: { firstName: 'Luis', lastName: 'Herrera', documentType: 'CC', documentNumber: '80123456' },
}

/** The same object with its keys in reverse order (nested objects too). */
const reversed = (value: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(Object.entries(value).reverse().map(([key, field]) => [
  key, typeof field === 'object' && field !== null && !Array.isArray(field) ? reversed(field as Record<string, unknown>) : field,
]))

const headersFor = (organizationId: string) => ({ 'config-organization-id': organizationId, 'organization-id': organizationId })

const profilesOf = (svc: TestApp, organizationId = svc.organizationId) => ({
  post: (key: string | undefined, payload: object, token = svc.adminToken) => svc.call({
    method: 'POST', url: '/v1/profiles', token, payload, headers: { ...headersFor(organizationId), ...(key === undefined ? {} : { 'idempotency-key': key }) },
  }),
  total: async (): Promise<number> =>
    (await svc.call({ method: 'GET', url: '/v1/profiles', token: svc.adminToken, headers: headersFor(organizationId) })).json().meta.total,
})

/** The events of a profile's stream, by type. */
const eventTypes = async (svc: TestApp, profileId: string): Promise<string[]> => {
  const types: string[] = []
  for await (const event of svc.runtime.history(`profile-${profileId}`)) types.push(event.type)
  return types
}

t.test('a creation with an Idempotency-Key: 201 first, 200 with the profile as it is now when sent again, 409 for another body', async (t) => {
  const svc = await createTestApp(t)
  const api = profilesOf(svc)

  const first = await api.post('lead-2026-0001', { type: 'natural', natural: ana })
  t.equal(first.statusCode, 201)
  t.equal(first.json().message, 'profile created')
  const profile = first.json().data
  t.equal(profile.ID, keyedProfileId(svc.organizationId, 'lead-2026-0001'), 'the id derives from the organization and the Key')

  const again = await api.post('lead-2026-0001', { type: 'natural', natural: ana })
  t.equal(again.statusCode, 200)
  t.same(again.json(), { message: 'profile created', data: profile }, 'the same answer, the same profile')
  t.equal(await api.total(), 1)

  const patched = await svc.call({
    method: 'PATCH', url: `/v1/profiles/${profile.ID}`, token: svc.adminToken, headers: headersFor(svc.organizationId), payload: { natural: { phone: '+573009998877' } },
  })
  t.equal(patched.statusCode, 200)
  const afterUpdate = await api.post('lead-2026-0001', { type: 'natural', natural: ana })
  t.equal(afterUpdate.statusCode, 200)
  t.equal(afterUpdate.json().data.natural.phone, '+573009998877', 'the profile as it is now, not as the request made it')
  t.equal(afterUpdate.json().data.ID, profile.ID)

  const reused = await api.post('lead-2026-0001', { type: 'natural', natural: { ...ana, documentNumber: '1020304051' } })
  t.equal(reused.statusCode, 409)
  t.same(reused.json().data, {
    code: 'IDEMPOTENCY_KEY_REUSED', message: 'this Idempotency-Key was already used for a different profile creation request',
    key: 'lead-2026-0001', profileId: profile.ID,
  })
  const { cityId: _city, ...withoutCity } = ana
  t.equal((await api.post('lead-2026-0001', { type: 'natural', natural: withoutCity })).statusCode, 409, 'a field left out is another request')
  t.equal((await api.post('lead-2026-0001', { type: 'natural', natural: { ...ana, monthlyIncome: '4500000.01' } })).statusCode, 409, 'another amount')
  t.equal((await api.post('lead-2026-0001', { type: 'legal', legal: andes })).statusCode, 409, 'another type')
  t.same(await eventTypes(svc, profile.ID), ['ProfileCreated', 'ProfileUpdated'], 'one creation, and the update')
  t.equal(await api.total(), 1)
})

t.test('the same creation with its keys in another order or its amounts spelled otherwise is the same request', async (t) => {
  const svc = await createTestApp(t)
  const api = profilesOf(svc)

  const natural = await api.post('natural-1', { type: 'natural', natural: ana })
  t.equal(natural.statusCode, 201)
  const reorderedNatural = await api.post('natural-1', { natural: reversed({ ...ana, monthlyIncome: '4500000.00' }), type: 'natural' })
  t.equal(reorderedNatural.statusCode, 200, 'keys reversed, monthlyIncome "4500000.00" for "4500000"')
  t.equal(reorderedNatural.json().data.ID, natural.json().data.ID)

  const legal = await api.post('legal-1', { type: 'legal', legal: andes })
  t.equal(legal.statusCode, 201)
  const reorderedLegal = await api.post('legal-1', { type: 'legal', legal: reversed({ ...andes, monthlyIncome: '120000000.5000' }) })
  t.equal(reorderedLegal.statusCode, 200, 'the legal representative\'s keys reversed too, the income "120000000.5000" for "120000000.5"')
  t.equal(reorderedLegal.json().data.ID, legal.json().data.ID)
  t.equal(await api.total(), 2)
})

t.test('concurrent duplicates with one Key create one profile, and every answer names it', async (t) => {
  const svc = await createTestApp(t)
  const api = profilesOf(svc)

  const racing = await Promise.all(Array.from({ length: 8 }, () => api.post('lead-race', { type: 'natural', natural: ana })))
  t.same(racing.map((r) => r.statusCode).sort(), [200, 200, 200, 200, 200, 200, 200, 201])
  const ids = new Set(racing.map((r) => r.json().data.ID))
  t.same([...ids], [keyedProfileId(svc.organizationId, 'lead-race')])
  t.same(await eventTypes(svc, keyedProfileId(svc.organizationId, 'lead-race')), ['ProfileCreated'], 'one ProfileCreated in the stream')
  t.equal(await api.total(), 1, 'eight concurrent sends, one profile')
})

t.test('a Key is the organization\'s: another organization\'s same Key creates its own profile', async (t) => {
  const svc = await createTestApp(t)
  const other = await createOrganization(svc, 'Otra')
  const ours = await profilesOf(svc).post('lead-shared', { type: 'natural', natural: ana })
  const theirs = await profilesOf(svc, other).post('lead-shared', { type: 'natural', natural: ana })
  t.equal(ours.statusCode, 201)
  t.equal(theirs.statusCode, 201)
  t.equal(theirs.json().data.entityID, other)
  t.equal(theirs.json().data.ID, keyedProfileId(other, 'lead-shared'))
  t.not(theirs.json().data.ID, ours.json().data.ID)
  t.equal(await profilesOf(svc).total(), 1)
  t.equal(await profilesOf(svc, other).total(), 1)
})

t.test('the same request from a caller who does not see the profile is refused; one who sees it gets it back', async (t) => {
  const svc = await createTestApp(t)
  const api = profilesOf(svc)
  const writer = ['ReadProfile', 'WriteProfile'] as const
  const dario = await addMember(svc, svc.organizationId, 'dario', writer)
  const carla = await addMember(svc, svc.organizationId, 'carla', writer)

  const first = await api.post('lead-colleague', { type: 'natural', natural: ana }, dario.token)
  t.equal(first.statusCode, 201)
  const profileId = first.json().data.ID
  const stranger = await api.post('lead-colleague', { type: 'natural', natural: ana }, carla.token)
  t.equal(stranger.statusCode, 409)
  t.same(stranger.json().data, {
    code: 'IDEMPOTENCY_KEY_REUSED', message: 'this Idempotency-Key was already used by another caller, for a profile this caller does not see',
    key: 'lead-colleague', profileId,
  })
  const share = await svc.call({
    method: 'POST', url: `/v1/profiles/${profileId}/shares`, token: dario.token, headers: headersFor(svc.organizationId), payload: { userId: carla.userId },
  })
  t.equal(share.statusCode, 201)
  const shared = await api.post('lead-colleague', { type: 'natural', natural: ana }, carla.token)
  t.equal(shared.statusCode, 200, 'shared with her, she sees it')
  t.equal(shared.json().data.ownerID, dario.userId, 'still the first caller\'s')
  const administrator = await api.post('lead-colleague', { type: 'natural', natural: ana })
  t.equal(administrator.statusCode, 200, 'an administrator sees every profile')
  t.equal(await api.total(), 1)
})

t.test('without a Key every creation is a new profile; a malformed Key is a 400; a refused creation leaves its Key free', async (t) => {
  const svc = await createTestApp(t)
  const api = profilesOf(svc)

  const plain = await Promise.all([api.post(undefined, { type: 'natural', natural: ana }), api.post(undefined, { type: 'natural', natural: ana })])
  t.same(plain.map((r) => r.statusCode), [201, 201])
  t.not(plain[0]?.json().data.ID, plain[1]?.json().data.ID)
  t.equal(await api.total(), 2)

  for (const key of ['', 'k'.repeat(256), 'tab\there', 'ñandú']) {
    t.equal((await api.post(key, { type: 'natural', natural: ana })).statusCode, 400, JSON.stringify(key))
  }
  t.equal((await api.post('k'.repeat(255), { type: 'natural', natural: ana })).statusCode, 201, '255 printable characters')

  const refused = await api.post('lead-refused', { type: 'natural', natural: { ...ana, birthDate: '2999-01-01' } })
  t.equal(refused.statusCode, 400, 'a birth date in the future')
  const unknownCity = await api.post('lead-refused', { type: 'natural', natural: { ...ana, cityId: deterministicId('city', '99999') } })
  t.equal(unknownCity.statusCode, 400, 'an unknown city')
  t.equal((await api.post('lead-refused', { type: 'natural', natural: ana })).statusCode, 201, 'so its Key is still free')
  t.equal(await api.total(), 4)
})

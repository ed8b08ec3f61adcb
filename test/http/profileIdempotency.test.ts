import t from 'tap'
import { keyedProfileId } from '../../src/commands/profile.js'
import { deterministicId } from '../../src/shared/ids.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { addMember, createOrganization } from '../helpers/members.js'
import { malformedKeys, oneCreatedOthersReturned, refusesMalformedKeys } from '../helpers/idempotency.js'

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
  oneCreatedOthersReturned(t, racing)
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
    key: 'lead-colleague',
  }, 'the profile is not named to a caller who does not see it')
  const strangerOtherwise = await api.post('lead-colleague', { type: 'natural', natural: { ...ana, firstName: 'Ana María' } }, carla.token)
  t.same(strangerOtherwise.json().data, {
    code: 'IDEMPOTENCY_KEY_REUSED', message: 'this Idempotency-Key was already used for a different profile creation request', key: 'lead-colleague',
  }, 'another request from that caller: refused, the profile not named either')
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

  await refusesMalformedKeys(t, (key) => api.post(key, { type: 'natural', natural: ana }), [...malformedKeys, 'ñandú'])
  t.equal((await api.post('k'.repeat(255), { type: 'natural', natural: ana })).statusCode, 201, '255 printable characters')

  const refused = await api.post('lead-refused', { type: 'natural', natural: { ...ana, birthDate: '2999-01-01' } })
  t.equal(refused.statusCode, 400, 'a birth date in the future')
  const unknownCity = await api.post('lead-refused', { type: 'natural', natural: { ...ana, cityId: deterministicId('city', '99999') } })
  t.equal(unknownCity.statusCode, 400, 'an unknown city')
  t.equal((await api.post('lead-refused', { type: 'natural', natural: ana })).statusCode, 201, 'so its Key is still free')
  t.equal(await api.total(), 4)
})

t.test('a copy with an Idempotency-Key: 201 first, 200 with that copy when asked again (the source inactive meanwhile too), 409 for another source or a creation', async (t) => {
  const svc = await createTestApp(t)
  const other = await createOrganization(svc, 'Otra')
  const source = (await profilesOf(svc).post(undefined, { type: 'natural', natural: ana })).json().data
  const second = (await profilesOf(svc).post(undefined, { type: 'natural', natural: { ...ana, documentNumber: '1020304051' } })).json().data
  const copy = (profileId: string, key: string | undefined, organizationId = other, token = svc.adminToken) => svc.call({
    method: 'POST', url: `/v1/profiles/${profileId}/copy`, token, payload: { organizationId },
    headers: { ...headersFor(svc.organizationId), ...(key === undefined ? {} : { 'idempotency-key': key }) },
  })

  const first = await copy(source.ID, 'copy-ana')
  t.equal(first.statusCode, 201)
  t.equal(first.json().message, 'profile copied')
  const copied = first.json().data
  t.equal(copied.ID, keyedProfileId(other, 'copy-ana'), 'the id derives from the target organization and the Key')
  t.equal(copied.copiedFromID, source.ID)
  t.equal(copied.entityID, other)

  const again = await copy(source.ID, 'copy-ana')
  t.equal(again.statusCode, 200)
  t.same(again.json(), { message: 'profile copied', data: copied }, 'the same copy, the same answer')

  const deactivated = await svc.call({
    method: 'POST', url: `/v1/profiles/${source.ID}/deactivate`, token: svc.adminToken, headers: headersFor(svc.organizationId), payload: { reason: 'duplicate' },
  })
  t.equal(deactivated.statusCode, 200)
  const afterDeactivation = await copy(source.ID, 'copy-ana')
  t.equal(afterDeactivation.statusCode, 200, 'a retry of a copy made while the source was active still gets it')
  t.equal(afterDeactivation.json().data.ID, copied.ID)
  const fresh = await copy(source.ID, 'copy-ana-2')
  t.equal(fresh.statusCode, 409, 'a new Key for an inactive source is a new copy, refused')
  t.equal(fresh.json().data.code, 'NOT_ACTIVE')

  const otherSource = await copy(second.ID, 'copy-ana')
  t.equal(otherSource.statusCode, 409)
  t.same(otherSource.json().data, {
    code: 'IDEMPOTENCY_KEY_REUSED', message: 'this Idempotency-Key was already used for a different profile creation request',
    key: 'copy-ana', profileId: copied.ID,
  })
  const creation = await profilesOf(svc, other).post('copy-ana', { type: 'natural', natural: ana })
  t.equal(creation.statusCode, 409, 'a creation with the Key a copy used in that organization is another request')
  const created = await profilesOf(svc).post('lead-then-copy', { type: 'natural', natural: { ...ana, documentNumber: '1020304052' } })
  t.equal(created.statusCode, 201)
  const copyUnderCreationKey = await copy(second.ID, 'lead-then-copy', svc.organizationId)
  t.equal(copyUnderCreationKey.statusCode, 409, 'and a copy with the Key a creation used')

  const sameKeyOtherTarget = await copy(second.ID, 'copy-ana', svc.organizationId)
  t.equal(sameKeyOtherTarget.statusCode, 201, 'the Key is the target organization\'s: in another one it is free')
  t.equal(sameKeyOtherTarget.json().data.ID, keyedProfileId(svc.organizationId, 'copy-ana'))
  t.same(await eventTypes(svc, copied.ID), ['ProfileCreated'], 'one creation in the copy\'s stream')
  t.equal(await profilesOf(svc, other).total(), 1, 'one copy in the target, however often asked')
})

t.test('concurrent copies with one Key make one copy; a caller who does not see it is refused; a bad Key is a 400', async (t) => {
  const svc = await createTestApp(t)
  const writer = ['ReadProfile', 'WriteProfile'] as const
  const dario = await addMember(svc, svc.organizationId, 'dario', writer)
  const carla = await addMember(svc, svc.organizationId, 'carla', writer)
  const source = (await profilesOf(svc).post(undefined, { type: 'natural', natural: ana })).json().data
  for (const userId of [dario.userId, carla.userId]) {
    const share = await svc.call({
      method: 'POST', url: `/v1/profiles/${source.ID}/shares`, token: svc.adminToken, headers: headersFor(svc.organizationId), payload: { userId },
    })
    t.equal(share.statusCode, 201)
  }
  const copy = (key: string, token: string) => svc.call({
    method: 'POST', url: `/v1/profiles/${source.ID}/copy`, token, payload: {}, headers: { ...headersFor(svc.organizationId), 'idempotency-key': key },
  })

  const racing = await Promise.all(Array.from({ length: 6 }, () => copy('copy-race', dario.token)))
  oneCreatedOthersReturned(t, racing)
  t.same([...new Set(racing.map((r) => r.json().data.ID))], [keyedProfileId(svc.organizationId, 'copy-race')])
  t.same(await eventTypes(svc, keyedProfileId(svc.organizationId, 'copy-race')), ['ProfileCreated'])

  const stranger = await copy('copy-race', carla.token)
  t.equal(stranger.statusCode, 409, 'carla sees the source but not dario\'s copy')
  t.equal(stranger.json().data.message, 'this Idempotency-Key was already used by another caller, for a profile this caller does not see')
  t.equal((await copy('copy-race', svc.adminToken)).statusCode, 200, 'an administrator sees the copy')
  t.equal((await copy('tab\there', dario.token)).statusCode, 400)
  t.equal(await profilesOf(svc).total(), 2, 'the source and one copy')
})

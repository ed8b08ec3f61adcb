import t from 'tap'
import { keyedProfileId, profileAggregate, profileRequestHash, type ProfileCommand } from '../../src/commands/profile.js'
import type { ProfileCreated, ProfileEvent, ProfileUpdated } from '../../src/events/profile.js'
import { scenario } from '../helpers/deciders.js'

const now = '2026-03-01T10:00:00.000Z'
const profile = scenario(profileAggregate)
const ana = { firstName: 'Ana', lastName: 'Gómez', documentType: 'CC' as const, documentNumber: '1020' }
const created: ProfileCreated = { type: 'ProfileCreated', data: {
  profileId: 'p1', organizationId: 'o1', ownerId: 'u1', type: 'natural', natural: ana, legal: null, isCopy: false, copiedFrom: null, createdAt: now,
} }
const create = { type: 'CreateProfile' as const, profileId: 'p1', organizationId: 'o1', ownerId: 'u1', profileType: 'natural' as const, natural: ana, legal: null, copiedFrom: null, now }

t.test('a natural profile needs its natural sub-object and refuses a legal one', async (t) => {
  profile.given().when(create).then(t, [created])
  profile.given().when({ ...create, natural: null }).thenRefused(t, 'VALIDATION_ERROR')
  profile.given().when({ ...create, legal: { businessName: 'x', documentType: 'NIT', documentNumber: '1' } }).thenRefused(t, 'VALIDATION_ERROR')
})

t.test('a copy records where it came from', async (t) => {
  profile.given().when({ ...create, copiedFrom: { profileId: 'p0', organizationId: 'o0' } })
    .then(t, [{ ...created, data: { ...created.data, isCopy: true, copiedFrom: { profileId: 'p0', organizationId: 'o0' } } }])
})

t.test('an update carries only changed fields and refuses the other person type', async (t) => {
  profile.given(created).when({ type: 'UpdateProfile', natural: { firstName: 'Ana', monthlyIncome: '5000000.00' }, now })
    .then(t, [{ type: 'ProfileUpdated', data: { profileId: 'p1', organizationId: 'o1', natural: { monthlyIncome: '5000000.00' }, updatedAt: now } }])
  profile.given(created).when({ type: 'UpdateProfile', natural: { firstName: 'Ana' }, now }).thenNothing(t)
  profile.given(created).when({ type: 'UpdateProfile', legal: { businessName: 'x' }, now }).thenRefused(t, 'VALIDATION_ERROR')
})

t.test('an update giving a nested object with the same values in another key order changes nothing', async (t) => {
  const representative = { firstName: 'Luis', lastName: 'Rey', documentType: 'CC' as const, documentNumber: '77' }
  const legal: ProfileCreated = { type: 'ProfileCreated', data: {
    ...created.data, type: 'legal', natural: null, legal: { businessName: 'Rey SAS', documentType: 'NIT', documentNumber: '900', legalRepresentative: representative },
  } }
  const reordered = { documentNumber: '77', documentType: 'CC' as const, lastName: 'Rey', firstName: 'Luis' }
  profile.given(legal).when({ type: 'UpdateProfile', legal: { legalRepresentative: reordered }, now }).thenNothing(t)
  profile.given(legal).when({ type: 'UpdateProfile', legal: { legalRepresentative: { ...reordered, documentNumber: '78' } }, now })
    .then(t, [{ type: 'ProfileUpdated', data: { profileId: 'p1', organizationId: 'o1', legal: { legalRepresentative: { ...reordered, documentNumber: '78' } }, updatedAt: now } }])
})

t.test('sharing with the owner or twice changes nothing', async (t) => {
  profile.given(created).when({ type: 'ShareProfile', userId: 'u1', sharedBy: 'u1', now }).thenNothing(t)
  const shared = { type: 'ProfileShared' as const, data: { profileId: 'p1', organizationId: 'o1', userId: 'u2', sharedBy: 'u1', at: now } }
  profile.given(created).when({ type: 'ShareProfile', userId: 'u2', sharedBy: 'u1', now }).then(t, [shared])
  profile.given(created, shared).when({ type: 'ShareProfile', userId: 'u2', sharedBy: 'u1', now }).thenNothing(t)
})

t.test('activation moves only when the state differs; unknown profiles are refused', async (t) => {
  profile.given(created).when({ type: 'ActivateProfile', now }).thenNothing(t)
  profile.given(created).when({ type: 'DeactivateProfile', reason: 'duplicate', now })
    .then(t, [{ type: 'ProfileDeactivated', data: { profileId: 'p1', organizationId: 'o1', reason: 'duplicate', at: now } }])
  profile.given().when({ type: 'ActivateProfile', now }).thenRefused(t, 'NOT_FOUND')
})

const file = { field: 'work-certificate', fileId: 'f1', contentType: 'application/pdf', size: 10, sha256: 'ab', filename: 'c.pdf' }

t.test('files: only the campos of the profile type; the same file twice is a no-op', async (t) => {
  const attached = { type: 'ProfileFileAttached' as const, data: { profileId: 'p1', organizationId: 'o1', ...file, attachedAt: now } }
  profile.given(created).when({ type: 'AttachProfileFile', ...file, now }).then(t, [attached])
  profile.given(created, attached).when({ type: 'AttachProfileFile', ...file, now }).thenNothing(t)
  profile.given(created).when({ type: 'AttachProfileFile', ...file, field: 'chamber-of-commerce-certificate', now }).thenRefused(t, 'VALIDATION_ERROR')
  profile.given(created).when({ type: 'AttachProfileFile', ...file, field: 'horoscope', now }).thenRefused(t, 'VALIDATION_ERROR')
  const state = profile.given(created, attached).state
  t.same(state.files, { 'work-certificate': 'f1' })
  t.same(state.fileRefs['work-certificate'], { ...file, attachedAt: now })
})

t.test('a copy carries the source\'s files; dates cannot lie in the future', async (t) => {
  const files = [{ ...file, attachedAt: now }]
  const copy = { ...create, copiedFrom: { profileId: 'p0', organizationId: 'o0' }, files }
  profile.given().when(copy).then(t, [{ ...created, data: { ...created.data, isCopy: true, copiedFrom: { profileId: 'p0', organizationId: 'o0' }, files } }])
  t.same(profile.given({ ...created, data: { ...created.data, files } }).state.files, { 'work-certificate': 'f1' })
  profile.given().when({ ...copy, files: [{ ...file, field: 'financial-statements', attachedAt: now }] }).thenRefused(t, 'VALIDATION_ERROR')
  profile.given().when({ ...create, natural: { ...ana, birthDate: '2026-03-02' } }).thenRefused(t, 'VALIDATION_ERROR', 'born tomorrow')
  profile.given().when({ ...create, natural: { ...ana, birthDate: '2026-03-01' } }).then(t, [{ ...created, data: { ...created.data, natural: { ...ana, birthDate: '2026-03-01' } } }])
  profile.given(created).when({ type: 'UpdateProfile', natural: { employmentStartDate: '2027-01-01' }, now }).thenRefused(t, 'VALIDATION_ERROR')
})

/** Strictly compared: t.same (as `then` uses it) takes null and undefined for equal, and a cleared field must be recorded as null. */
const decides = (history: ProfileEvent[], command: ProfileCommand) => profileAggregate.decide(command, profile.given(...history).state)

t.test('clearing a field the profile has records it as null, and the state then lacks it', async (t) => {
  const employed: ProfileCreated = { ...created, data: { ...created.data, natural: { ...ana, middleName: 'Lucía', employerName: 'Café del Valle S.A.S.' } } }
  const cleared: ProfileUpdated = { type: 'ProfileUpdated', data: { profileId: 'p1', organizationId: 'o1', natural: { employerName: null }, updatedAt: now } }
  t.strictSame(decides([employed], { type: 'UpdateProfile', natural: { employerName: null }, now }), [cleared])
  const state = profile.given(employed, cleared).state
  t.strictSame(state.natural, { ...ana, middleName: 'Lucía' })
  t.notOk(state.natural !== null && 'employerName' in state.natural, 'the key is gone, not kept as null or undefined')
  t.equal(profile.given(employed).state.natural?.employerName, 'Café del Valle S.A.S.', 'the earlier state is not touched')
})

t.test('clearing a field the profile does not have changes nothing', async (t) => {
  t.strictSame(decides([created], { type: 'UpdateProfile', natural: { employerName: null, middleName: null }, now }), [])
  t.strictSame(decides([created], { type: 'UpdateProfile', natural: { firstName: 'Ana', cityId: null }, now }), [], 'same value and nothing to clear')
})

t.test('one update sets some fields and clears others; only the real changes are recorded', async (t) => {
  const employed: ProfileCreated = { ...created, data: { ...created.data, natural: { ...ana, employmentType: 'formal', employerName: 'Café del Valle S.A.S.' } } }
  const update: ProfileUpdated = { type: 'ProfileUpdated', data: {
    profileId: 'p1', organizationId: 'o1', natural: { employmentType: 'unemployed', employerName: null }, updatedAt: now,
  } }
  const command: ProfileCommand = { type: 'UpdateProfile', natural: { employmentType: 'unemployed', employerName: null, occupation: null, lastName: 'Gómez' }, now }
  t.strictSame(decides([employed], command), [update], 'occupation was not there and the last name is the same')
  t.strictSame(profile.given(employed, update).state.natural, { ...ana, employmentType: 'unemployed' })
})

t.test('a legal representative is cleared whole with null', async (t) => {
  const representative = { firstName: 'Luis', lastName: 'Rey', documentType: 'CC' as const, documentNumber: '77' }
  const company = { businessName: 'Rey SAS', documentType: 'NIT' as const, documentNumber: '900', legalRepresentative: representative }
  const legal: ProfileCreated = { type: 'ProfileCreated', data: { ...created.data, type: 'legal', natural: null, legal: company } }
  const cleared: ProfileUpdated = { type: 'ProfileUpdated', data: { profileId: 'p1', organizationId: 'o1', legal: { legalRepresentative: null }, updatedAt: now } }
  t.strictSame(decides([legal], { type: 'UpdateProfile', legal: { legalRepresentative: null }, now }), [cleared])
  t.strictSame(profile.given(legal, cleared).state.legal, { businessName: 'Rey SAS', documentType: 'NIT', documentNumber: '900' })
  t.strictSame(decides([legal, cleared], { type: 'UpdateProfile', legal: { legalRepresentative: null }, now }), [], 'already cleared')
})

t.test('a cleared date is not a date in the future', async (t) => {
  const started: ProfileCreated = { ...created, data: { ...created.data, natural: { ...ana, employmentStartDate: '2020-01-01' } } }
  t.strictSame(decides([started], { type: 'UpdateProfile', natural: { employmentStartDate: null, birthDate: null }, now }),
    [{ type: 'ProfileUpdated', data: { profileId: 'p1', organizationId: 'o1', natural: { employmentStartDate: null }, updatedAt: now } }])
})

t.test('a creation with an Idempotency-Key records it, and the state keeps it', async (t) => {
  const idempotency = { key: 'lead-1', requestHash: profileRequestHash('natural', ana) }
  const keyed: ProfileCreated = { ...created, data: { ...created.data, idempotency } }
  t.strictSame(decides([], { ...create, idempotency }), [keyed])
  t.strictSame(profile.given(keyed).state.idempotency, idempotency)
  t.equal(profile.given(created).state.idempotency, undefined, 'absent without a Key')
  t.notOk('idempotency' in created.data, 'and absent from the event')
  t.strictSame(decides([], create), [created], 'a creation without a Key records none')
})

t.test('a keyed creation of a profile that exists decides nothing (a lost race); without a Key it is refused', async (t) => {
  const idempotency = { key: 'lead-1', requestHash: profileRequestHash('natural', ana) }
  const keyed: ProfileCreated = { ...created, data: { ...created.data, idempotency } }
  profile.given(keyed).when({ ...create, idempotency }).thenNothing(t, 'the same Key again')
  profile.given(keyed).when({ ...create, idempotency: { key: 'lead-1', requestHash: 'another' } }).thenNothing(t, 'the caller compares the hashes, not the decider')
  profile.given(keyed).when(create).thenRefused(t, 'ALREADY_EXISTS')
  profile.given(created).when(create).thenRefused(t, 'ALREADY_EXISTS')
})

t.test('the request hash: the type and the person, whatever the key order or the spelling of an amount', async (t) => {
  const full = { ...ana, monthlyIncome: '4500000', birthDate: '1990-04-12' }
  const hash = profileRequestHash('natural', full)
  t.equal(profileRequestHash('natural', { birthDate: '1990-04-12', monthlyIncome: '4500000.00', documentNumber: '1020', documentType: 'CC', lastName: 'Gómez', firstName: 'Ana' }),
    hash, 'keys in another order, the income with decimals')
  t.equal(profileRequestHash('natural', { ...full, middleName: undefined }), hash, 'an undefined field is an absent one')
  t.not(profileRequestHash('natural', { ...full, monthlyIncome: '4500000.01' }), hash, 'another amount')
  t.not(profileRequestHash('natural', { ...full, firstName: 'Ana ' }), hash, 'another name')
  t.not(profileRequestHash('natural', ana), hash, 'fewer fields')
  const representative = { firstName: 'Luis', lastName: 'Rey', documentType: 'CC' as const, documentNumber: '77' }
  const company = { businessName: 'Rey SAS', documentType: 'NIT' as const, documentNumber: '900', legalRepresentative: representative }
  t.equal(profileRequestHash('legal', { ...company, legalRepresentative: { documentNumber: '77', documentType: 'CC', lastName: 'Rey', firstName: 'Luis' } }),
    profileRequestHash('legal', company), 'a nested object in another key order')
  t.not(profileRequestHash('natural', company), profileRequestHash('legal', company), 'the type is part of it')
  t.equal(keyedProfileId('o1', 'lead-1'), keyedProfileId('o1', 'lead-1'))
  t.not(keyedProfileId('o1', 'lead-1'), keyedProfileId('o2', 'lead-1'), 'a Key is per organization')
})

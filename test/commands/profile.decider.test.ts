import t from 'tap'
import { profileAggregate } from '../../src/commands/profile.js'
import type { ProfileCreated } from '../../src/events/profile.js'
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

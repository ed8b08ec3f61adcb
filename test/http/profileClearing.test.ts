import t from 'tap'
import { deterministicId } from '../../src/shared/ids.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { lending } from '../helpers/lending.js'
import { consumerModel, scoringModelApi } from '../helpers/scoring.js'

interface ProfileBody {
  ID: string
  updatedAt: string
  natural: Record<string, unknown> | null
  legal: Record<string, unknown> | null
  city: { name: string } | null
}

const medellin = deterministicId('city', '05001')

const ana = {
  firstName: 'Ana', middleName: 'Lucía', lastName: 'Gómez', secondLastName: 'Restrepo', documentType: 'CC', documentNumber: '1020304050',
  birthDate: '1990-04-12', email: 'ana@example.co', cityId: medellin, monthlyIncome: '4500000.00', employmentType: 'formal',
  employerName: 'Café del Valle S.A.S.', occupation: 'Contadora',
}
const andes = {
  businessName: 'Andes Coffee Export S.A.S.', documentType: 'NIT', documentNumber: '900123456', taxId: '900123456-7', cityId: medellin,
  legalRepresentative: { firstName: 'Luis', lastName: 'Herrera', documentType: 'CC', documentNumber: '80123456' },
}

/** The profile routes in the test app's organization, with both organization headers. */
const profilesApi = (svc: TestApp) => {
  const headers = { 'config-organization-id': svc.organizationId, 'organization-id': svc.organizationId }
  const call = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
    svc.call({ method, url: `/v1/profiles${url}`, token: svc.adminToken, headers, ...(payload === undefined ? {} : { payload }) })
  return {
    create: async (payload: object): Promise<ProfileBody> => {
      const response = await call('POST', '', payload)
      if (response.statusCode !== 201) throw new Error(`expected 201, got ${response.statusCode}: ${response.body}`)
      const body: { data: ProfileBody } = response.json()
      return body.data
    },
    patch: (id: string, payload: object) => call('PATCH', `/${id}`, payload),
    get: async (id: string): Promise<ProfileBody> => {
      const body: { data: ProfileBody } = (await call('GET', `/${id}`)).json()
      return body.data
    },
    list: (query: string) => call('GET', query),
  }
}

t.test('PATCH with null clears optional fields: the profile no longer has them', async (t) => {
  const svc = await createTestApp(t)
  const api = profilesApi(svc)
  const profile = await api.create({ type: 'natural', natural: ana })
  const patched = await api.patch(profile.ID, { natural: { employerName: null, middleName: null, employmentType: 'unemployed' } })
  t.equal(patched.statusCode, 200)
  t.equal(patched.json().message, 'profile updated')
  const { employerName: _employer, middleName: _middle, ...rest } = ana
  for (const natural of [patched.json().data.natural, (await api.get(profile.ID)).natural]) {
    t.notOk('employerName' in natural, 'employerName is gone')
    t.notOk('middleName' in natural, 'middleName is gone')
    t.match(natural, { ...rest, employmentType: 'unemployed' }, 'the other fields stay')
  }
})

t.test('clearing what the profile does not have changes nothing, not even updatedAt', async (t) => {
  const svc = await createTestApp(t)
  const api = profilesApi(svc)
  const profile = await api.create({ type: 'natural', natural: { firstName: 'Eva', lastName: 'Ruiz', documentType: 'CC', documentNumber: '123456' } })
  const patched = await api.patch(profile.ID, { natural: { employerName: null, phone: null } })
  t.equal(patched.statusCode, 200)
  t.equal(patched.json().data.updatedAt, profile.updatedAt)
  t.same(Object.keys((await api.get(profile.ID)).natural ?? {}).sort(), ['documentNumber', 'documentType', 'firstName', 'lastName'])
})

t.test('null on a required field is refused in the 400 envelope, naming the field, and nothing changes', async (t) => {
  const svc = await createTestApp(t)
  const api = profilesApi(svc)
  const natural = await api.create({ type: 'natural', natural: ana })
  const legal = await api.create({ type: 'legal', legal: andes })
  const refusals: Array<[string, object, string]> = [
    [natural.ID, { natural: { firstName: null } }, 'body.natural.firstName'],
    [natural.ID, { natural: { documentNumber: null, employerName: null } }, 'body.natural.documentNumber'],
    [natural.ID, { natural: { lastName: null } }, 'body.natural.lastName'],
    [natural.ID, { natural: { documentType: null } }, 'body.natural.documentType'],
    [legal.ID, { legal: { businessName: null } }, 'body.legal.businessName'],
    [legal.ID, { legal: { documentType: null } }, 'body.legal.documentType'],
    [legal.ID, { legal: { documentNumber: null } }, 'body.legal.documentNumber'],
    [legal.ID, { legal: { legalRepresentative: { firstName: 'Luis', lastName: null, documentType: 'CC', documentNumber: '80123456' } } },
      'body.legal.legalRepresentative.lastName'],
  ]
  for (const [id, payload, field] of refusals) {
    const response = await api.patch(id, payload)
    t.equal(response.statusCode, 400, `${field}: null is refused`)
    const body = response.json()
    t.equal(body.status, 'fail')
    t.equal(body.data.code, 'VALIDATION_ERROR')
    t.ok(body.data.errors.some((error: { field: string }) => error.field === field), `names ${field}`)
  }
  t.match((await api.get(natural.ID)).natural, ana, 'the natural profile is as created (employerName too)')
  t.equal((await api.get(natural.ID)).updatedAt, natural.updatedAt)
  t.match((await api.get(legal.ID)).legal, andes, 'the legal profile is as created')
})

t.test('cityId: null clears the city, in the profile and in its expansion', async (t) => {
  const svc = await createTestApp(t)
  const api = profilesApi(svc)
  const profile = await api.create({ type: 'natural', natural: ana })
  t.equal(profile.city?.name, 'Medellín')
  t.equal((await api.patch(profile.ID, { natural: { cityId: null } })).statusCode, 200, 'a null city is not checked against GET /cities')
  const after = await api.get(profile.ID)
  t.equal(after.city, null)
  t.notOk(after.natural !== null && 'cityId' in after.natural)
  const listed = (await api.list('?expand=city')).json().data
  t.same(listed.map((p: { ID: string; city: unknown }) => [p.ID, p.city]), [[profile.ID, null]])
  t.equal((await api.patch(profile.ID, { natural: { cityId: deterministicId('city', '99999') } })).statusCode, 400, 'an unknown city is still refused')
})

t.test('a legal profile\'s representative is cleared whole with null', async (t) => {
  const svc = await createTestApp(t)
  const api = profilesApi(svc)
  const profile = await api.create({ type: 'legal', legal: andes })
  const patched = await api.patch(profile.ID, { legal: { legalRepresentative: null, taxId: null } })
  t.equal(patched.statusCode, 200)
  const legal = (await api.get(profile.ID)).legal
  t.same(legal, { businessName: 'Andes Coffee Export S.A.S.', documentType: 'NIT', documentNumber: '900123456', cityId: medellin })
  t.equal((await api.patch(profile.ID, { natural: { employerName: null } })).statusCode, 400, 'a natural change on a legal profile is refused, null or not')
})

t.test('credits and credit limits show the debtor without the cleared fields', async (t) => {
  const svc = await createTestApp(t)
  const api = profilesApi(svc)
  const lend = await lending(svc)
  const debtorId = (await api.create({ type: 'natural', natural: ana })).ID
  const credit = await lend.requestCredit({ creditLineId: await lend.createLine(), debtorId })
  const limit = await lend.call('POST', '/v1/creditor/credit-limits', { debtorId, maxAmount: '5000000', currency: 'COP', expirationDate: '2099-12-31' })
  t.equal(limit.statusCode, 201)
  const limitId: string = limit.json().creditLimit.creditLimitId
  t.equal(limit.json().creditLimit.debtorInfo.name, 'Ana Lucía Gómez Restrepo')

  t.equal((await api.patch(debtorId, { natural: { middleName: null, secondLastName: null, email: null } })).statusCode, 200)
  const debtorInfo = (await lend.call('GET', `/v1/creditor/credit-limits/${limitId}`)).json().creditLimit.debtorInfo
  t.same(debtorInfo, { debtorId, name: 'Ana Gómez', documentType: 'CC', documentNumber: '1020304050' })
  t.match((await lend.call('GET', `/v1/credits/${credit.ID}`)).json().data.credit.debtor, { ID: debtorId, name: 'Ana Gómez', email: '' })
})

t.test('scoring sees a cleared field as missing: hasEmployer false, a cleared income scores 0', async (t) => {
  const { svc, base, call } = await scoringModelApi(t)
  const api = profilesApi(svc)
  const modelId: string = (await call({ method: 'POST', url: base, payload: consumerModel })).json().data.ID
  const profileId = (await api.create({ type: 'natural', natural: ana })).ID
  const evaluate = async () => (await call({ method: 'POST', url: `${base}/${modelId}/evaluate`, payload: { profileId } })).json().data
  const before = await evaluate()
  t.match(before.fields, { hasEmployer: true, monthlyIncome: '4500000.00', employmentType: 'formal' })

  t.equal((await api.patch(profileId, { natural: { employerName: null, monthlyIncome: null, employmentType: 'unemployed' } })).statusCode, 200)
  const after = await evaluate()
  t.equal(after.fields.hasEmployer, false)
  t.notOk('monthlyIncome' in after.fields, 'the income is absent, not zero or null')
  t.match(after.variables[1], { field: 'monthlyIncome', matched: false, score: 0 })
})

t.test('a wrong value on a clearable field is named once, without the null it could also have been', async (t) => {
  const svc = await createTestApp(t)
  const api = profilesApi(svc)
  const profile = await api.create({ type: 'natural', natural: ana })
  const cases: Array<[object, string]> = [
    [{ employerName: 5 }, 'must be string'],
    [{ employerName: '' }, 'must NOT have fewer than 1 characters'],
    [{ gender: 'unknown' }, 'must be one of female, male, other'],
  ]
  for (const [natural, message] of cases) {
    const response = await api.patch(profile.ID, { natural })
    t.equal(response.statusCode, 400)
    const field = `body.natural.${Object.keys(natural)[0] ?? ''}`
    t.same(response.json().data.errors, [{ field, message }], JSON.stringify(natural))
  }
})

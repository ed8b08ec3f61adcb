import t from 'tap'
import type { City } from '../../src/reference/cities.js'
import { deterministicId } from '../../src/shared/ids.js'
import { createTestApp, type TestApp } from '../helpers/app.js'

const cities = async (svc: TestApp, query: string) => {
  const response = await svc.call({ method: 'GET', url: `/v1/cities${query}`, token: svc.adminToken })
  return { status: response.statusCode, body: response.json(), list: (response.json().data?.cities ?? []) as City[] }
}

t.test('city search by name ignores accents and case, best matches first', async (t) => {
  const svc = await createTestApp(t)
  const accented = await cities(svc, '?q=Bogotá')
  const plain = await cities(svc, '?q=BOGOTA')
  t.equal(accented.status, 200)
  t.same(plain.list, accented.list, 'with and without accents, any case: the same answer')
  t.equal(accented.list[0]?.name, 'Bogotá, D.C.')
  t.match(accented.list[0], { daneCode: 11001, state: { name: 'Bogotá, D.C.', daneCode: 11 }, province: null, lat: '4.649251', long: '-74.106992' })

  const medellin = (await cities(svc, '?q=medellin')).list
  t.same(medellin.map((c) => c.name), ['Medellín'])
  t.match(medellin[0], {
    id: deterministicId('city', '05001'), daneCode: 5001, state: { id: deterministicId('department', '05'), name: 'Antioquia', daneCode: 5 },
    province: { id: deterministicId('province', '05', 'Valle de Aburrá'), name: 'Valle de Aburrá' }, createdAt: '2026-01-15T00:00:00.000Z',
  }, 'ids derive from DANE codes: the same on every installation')

  const cucuta = (await cities(svc, '?q=cucuta')).list
  t.same(cucuta.map((c) => c.name), ['San José de Cúcuta'], 'a match inside the name')
  const san = (await cities(svc, '?q=san&limit=100')).list
  t.ok(san.length > 20, 'many cities start with San')
  t.ok(san.slice(0, 5).every((c) => c.name.toLowerCase().startsWith('san')), 'prefix matches come first')
  t.equal((await cities(svc, '?q=san')).list.length, 20, 'at most 20 by default')
  t.equal((await cities(svc, '?q=san&limit=3')).list.length, 3)
  t.same((await cities(svc, '?q=zzzz')).list, [], 'no match is an empty list')
})

t.test('an exact DANE lookup gives the one city, or an empty list', async (t) => {
  const svc = await createTestApp(t)
  const cali = await cities(svc, '?dane=76001')
  t.same(cali.list.map((c) => [c.name, c.daneCode]), [['Santiago de Cali', 76001]])
  t.equal(typeof cali.list[0]?.daneCode, 'number', 'daneCode is an integer')
  t.same((await cities(svc, '?dane=99999')).list, [])
  t.same((await cities(svc, '?dane=76001&q=cali')).list.map((c) => c.daneCode), [76001], 'both given: the city must match both')
  t.same((await cities(svc, '?dane=76001&q=medellin')).list, [])
})

t.test('bad queries are refused in the envelope', async (t) => {
  const svc = await createTestApp(t)
  for (const [query, why] of [
    ['?q=ca', 'q shorter than 3 characters'],
    ['?q=a%20%20', 'q of one letter and spaces'],
    ['?q=..a', 'q of one letter and punctuation'],
    [`?q=${encodeURIComponent('ñ..')}`, 'q of one accented letter and punctuation'],
    ['?q=a%20%20&dane=05001', 'such a q beside a dane'],
    ['?dane=5001', 'dane of 4 digits'],
    ['?dane=050011', 'dane of 6 digits'],
    ['?dane=05OO1', 'dane with letters'],
    ['', 'neither q nor dane'],
    ['?q=cali&limit=0', 'limit 0'],
    ['?q=cali&limit=101', 'limit over 100'],
    ['?city=cali', 'an unknown parameter'],
  ]) {
    const response = await cities(svc, query ?? '')
    t.equal(response.status, 400, why)
    t.match(response.body, { status: 'fail', data: { code: 'VALIDATION_ERROR' } }, why)
  }
  t.match((await cities(svc, '?q=..a')).body.data.errors, [{ field: 'querystring.q', message: 'must hold at least 3 letters or digits besides spaces and punctuation' }])
  t.ok((await cities(svc, '?q=b.o.g')).list.length > 0, 'three letters with punctuation between them are a search')
  const anonymous = await svc.call({ method: 'GET', url: '/v1/cities?q=cali' })
  t.equal(anonymous.statusCode, 401, 'a token is needed')
})

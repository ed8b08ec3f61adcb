import t from 'tap'
import { CityCatalogue, cityCatalogue, normalizeName } from '../../src/reference/cities.js'

t.test('names normalize without accents, case or punctuation', async (t) => {
  t.equal(normalizeName('Bogotá, D.C.'), 'bogota d c')
  t.equal(normalizeName('  SAN JOSÉ de Cúcuta '), 'san jose de cucuta')
  t.equal(normalizeName('Ñuñoa'), 'nunoa')
})

t.test('the shipped DIVIPOLA file loads whole: 1,122 municipalities, each department known, ids unique', async (t) => {
  const catalogue = cityCatalogue()
  t.equal(catalogue.size, 1122)
  const all = catalogue.search('a', 2000).concat(catalogue.search('e', 2000))
  t.ok(all.length > 1000)
  t.equal(new Set(all.map((c) => c.id)).size, new Set(all.map((c) => c.daneCode)).size, 'one id per code')
  t.equal(catalogue.byDaneCode('05001')?.name, 'Medellín')
  t.equal(catalogue.get(catalogue.byDaneCode('05001')?.id ?? '')?.daneCode, 5001)
})

t.test('punctuation in a name may be typed as spaces or left out', async (t) => {
  const catalogue = cityCatalogue()
  for (const q of ['bogota dc', 'Bogotá, D.C.', 'bogota d c', 'BOGOTA D.C', 'bogotadc']) {
    t.equal(catalogue.search(q, 5)[0]?.name, 'Bogotá, D.C.', q)
  }
  t.same(catalogue.search('bogota dcx', 5), [], 'still a containment, not a fuzzy match')
})

t.test('a malformed data file is refused at load, naming the bad row', async (t) => {
  t.throws(() => new CityCatalogue({ departments: [], municipalities: [{ code: '05001' }] }), /municipalities\.0/)
  t.throws(() => new CityCatalogue({
    departments: [],
    municipalities: [{ code: '05001', daneCode: 5001, name: 'Medellín', departmentCode: '05', province: null, lat: '6', long: '-75' }],
  }), /unknown department/)
})

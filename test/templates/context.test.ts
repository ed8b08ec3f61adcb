import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { allProfileFileFields, acceptsFileField, fileIdKey } from '../../src/events/profile.js'
import { compileTemplate } from '../../src/templates/compile.js'
import { contextPaths, emptyTemplateContext } from '../../src/templates/context.js'
import { TemplateSyntaxError } from '../../src/templates/errors.js'
import { templateFunctions } from '../../src/templates/functions.js'

const doc = fs.readFileSync(path.resolve(import.meta.dirname, '../../docs/webhooks.md'), 'utf8')

t.test('the empty credit has every field with its zero value', async (t) => {
  const empty = emptyTemplateContext()
  t.match(empty.Credit, { ID: '', Status: '', Principal: '0', Term: 0, DisbursedAt: '', Installments: [] })
  t.match(empty.Credit.Debtor.Natural, { FirstName: '', MonthlyIncome: '0', Age: 0, WorkCertificateFileID: '' })
  t.match(empty.Credit.Debtor.Legal.LegalRepresentative, { FirstName: '', DocumentNumber: '' })
  t.match(empty.Order, { ID: '', Amount: '0', RetryCount: 0, Metadata: { ExchangeRate: '0', ProcessingTime: 0 } })
  const leaves = (value: unknown): unknown[] => (value !== null && typeof value === 'object' && !Array.isArray(value) ? Object.values(value).flatMap(leaves) : [value])
  t.ok(leaves(empty).every((v) => v === '' || v === '0' || v === 0 || (Array.isArray(v) && v.length === 0)), 'only zero values')
  for (const path of contextPaths().filter((p) => !p.includes('[]'))) {
    const value = path.split('.').reduce((node: unknown, key) => (node !== null && typeof node === 'object' ? Reflect.get(node, key) : undefined), empty)
    t.not(value, undefined, `${path} is present`)
  }
})

t.test('a person exposes exactly the <Campo>FileID keys of the profile campos its type takes', async (t) => {
  t.equal(fileIdKey('work-certificate'), 'WorkCertificateFileID')
  t.equal(fileIdKey('chamber-of-commerce-certificate'), 'ChamberOfCommerceCertificateFileID')
  const { Natural, Legal } = emptyTemplateContext().Credit.Debtor
  for (const [type, person] of [['natural', Natural], ['legal', Legal]] as const) {
    const expected = allProfileFileFields.filter((campo) => acceptsFileField(type, campo)).map(fileIdKey).sort()
    t.same(Object.keys(person).filter((key) => key.endsWith('FileID')).sort(), expected, type)
    for (const key of expected) t.equal(Reflect.get(person, key), '', `${type} ${key} is present and empty`)
  }
  t.notOk(Object.hasOwn(Natural, 'ChamberOfCommerceCertificateFileID'), 'a campo only legal persons take is not on Natural')
  t.throws(() => compileTemplate('{{ .Credit.Debtor.Natural.ProofOfAddressFileID }}'), TemplateSyntaxError, 'a FileID of no campo is refused when saved')
  t.throws(() => compileTemplate('{{ .Credit.Debtor.Natural.ShareholderStructureFileID }}'), TemplateSyntaxError, 'so is one of a campo the person type does not take')
  t.doesNotThrow(() => compileTemplate('{{ .Credit.Debtor.Legal.ShareholderStructureFileID }}'))
})

t.test('the webhook document lists every context field and every template function', async (t) => {
  for (const path of contextPaths()) t.match(doc, `| \`.${path}\` |`, path)
  for (const name of templateFunctions.keys()) t.match(doc, `| \`${name}\` |`, name)
})

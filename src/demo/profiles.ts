import { profileAggregate } from '../commands/profile.js'
import type { LegalPerson, NaturalPerson } from '../events/profile.js'
import { deterministicId } from '../shared/ids.js'
import { demoPdf, demoPng, putDemoFile } from './files.js'
import type { DemoStep } from './index.js'

/** Debtors of the demo organization; ids are `deterministicId('demo', 'profile', key)` and land in `state.ids['profile.<key>']`. */
export const demoNaturalPersons: Record<string, NaturalPerson> = {
  'ana': {
    firstName: 'Ana', lastName: 'Gómez', secondLastName: 'Restrepo', documentType: 'CC', documentNumber: '1020304050',
    birthDate: '1990-04-12', gender: 'female', email: 'ana.gomez@example.co', phone: '+573001234567', address: 'Calle 10 # 43-12',
    monthlyIncome: '4500000.00', employmentType: 'formal', employerName: 'Café del Valle S.A.S.', occupation: 'Contadora',
    employmentStartDate: '2018-02-01',
  },
  'bruno': {
    firstName: 'Bruno', lastName: 'Martínez', documentType: 'CC', documentNumber: '79865432', birthDate: '2006-01-30', gender: 'male',
    email: 'bruno.martinez@example.co', phone: '+573109876543', monthlyIncome: '1300000.00', employmentType: 'informal', occupation: 'Mensajero',
  },
  'carmen': {
    firstName: 'Carmen', lastName: 'Rojas', secondLastName: 'Díaz', documentType: 'CE', documentNumber: 'E-445566', birthDate: '1978-09-03',
    gender: 'female', email: 'carmen.rojas@example.co', monthlyIncome: '9800000.00', employmentType: 'independent', occupation: 'Arquitecta',
  },
}

export const demoLegalPersons: Record<string, LegalPerson> = {
  'andes-coffee': {
    businessName: 'Andes Coffee Export S.A.S.', tradeName: 'Andes Coffee', documentType: 'NIT', documentNumber: '900123456', taxId: '900123456-7',
    legalRepresentative: { firstName: 'Luis', lastName: 'Herrera', documentType: 'CC', documentNumber: '80123456', email: 'luis@andescoffee.co' },
    email: 'finanzas@andescoffee.co', phone: '+576042345678', address: 'Carrera 43A # 1-50, Medellín', incorporationDate: '2012-06-15',
    economicActivity: '4631', monthlyIncome: '185000000.00',
  },
  'caribe-logistica': {
    businessName: 'Caribe Logística Ltda.', documentType: 'NIT', documentNumber: '901987654', taxId: '901987654-1',
    legalRepresentative: { firstName: 'Marta', lastName: 'Salcedo', documentType: 'CC', documentNumber: '32654987' },
    email: 'contabilidad@caribelogistica.co', incorporationDate: '2019-11-20', economicActivity: '5229', monthlyIncome: '62000000.00',
  },
}

export const demoProfileId = (key: string): string => deterministicId('demo', 'profile', key)

/** Files the demo attaches: profile key, campo, and the bytes (PDF certificates, PNG document photos). */
const demoProfileFiles: Array<{ key: string; field: string; content: () => Buffer; contentType: string; filename: string }> = [
  { key: 'ana', field: 'work-certificate', content: () => demoPdf('Certificado laboral - Ana Gomez Restrepo'), contentType: 'application/pdf', filename: 'certificado-laboral.pdf' },
  { key: 'ana', field: 'identity-document-front', content: () => demoPng(1), contentType: 'image/png', filename: 'cedula-frente.png' },
  { key: 'carmen', field: 'income-certificate', content: () => demoPdf('Certificado de ingresos - Carmen Rojas'), contentType: 'application/pdf', filename: 'ingresos.pdf' },
  { key: 'andes-coffee', field: 'chamber-of-commerce-certificate', content: () => demoPdf('Camara de Comercio - Andes Coffee Export'), contentType: 'application/pdf', filename: 'camara-comercio.pdf' },
  { key: 'andes-coffee', field: 'rut', content: () => demoPdf('RUT 900123456-7'), contentType: 'application/pdf', filename: 'rut.pdf' },
]

/** Profiles the demo shares with the analyst (who otherwise sees only their own). */
const demoShares = ['ana', 'andes-coffee']

export const profilesDemo: DemoStep = {
  name: 'debtor profiles',
  async run(runtime, state) {
    const now = runtime.clock.now().toISOString()
    const owner = state.users['demo.admin'] ?? 'demo'
    const context = { organizationId: state.organizationId, actorId: owner, correlationId: deterministicId('demo', 'profiles', now) }
    const people: Array<[string, 'natural' | 'legal', NaturalPerson | null, LegalPerson | null]> = [
      ...Object.entries(demoNaturalPersons).map(([key, p]): [string, 'natural', NaturalPerson, null] => [key, 'natural', p, null]),
      ...Object.entries(demoLegalPersons).map(([key, p]): [string, 'legal', null, LegalPerson] => [key, 'legal', null, p]),
    ]
    for (const [key, profileType, natural, legal] of people) {
      const profileId = demoProfileId(key)
      const { state: existing } = await runtime.commands.load(profileAggregate, profileId)
      if (!existing.exists) {
        await runtime.commands.execute(profileAggregate, profileId, {
          type: 'CreateProfile', profileId, organizationId: state.organizationId, ownerId: owner, profileType, natural, legal, copiedFrom: null, now,
        }, context)
      }
      state.ids[`profile.${key}`] = profileId
    }
    for (const file of demoProfileFiles) {
      const profileId = demoProfileId(file.key)
      const fileId = deterministicId('demo', 'profile-file', file.key, file.field)
      const { state: profile } = await runtime.commands.load(profileAggregate, profileId)
      if (profile.files[file.field] === fileId) continue
      const stored = await putDemoFile(runtime, fileId, file.content(), { contentType: file.contentType, filename: file.filename, organizationId: state.organizationId })
      await runtime.commands.execute(profileAggregate, profileId, {
        type: 'AttachProfileFile', field: file.field, fileId, contentType: stored.contentType, size: stored.size, sha256: stored.sha256, filename: stored.filename, now,
      }, context)
    }
    const analyst = state.users['demo.analyst']
    if (analyst !== undefined) {
      for (const key of demoShares) {
        await runtime.commands.execute(profileAggregate, demoProfileId(key), { type: 'ShareProfile', userId: analyst, sharedBy: owner, now }, context)
      }
    }
  },
}

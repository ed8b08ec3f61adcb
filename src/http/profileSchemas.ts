import { Type } from 'typebox'
import { allProfileFileFields } from '../events/profile.js'
import { MONEY_INPUT_PATTERN } from '../shared/money.js'
import { CitySchema } from './cities.js'
import { Timestamp, Uuid } from './schemas.js'

const DocumentType = Type.Enum(['CC', 'CE', 'TI', 'PP', 'PEP', 'PPT', 'NIT'], {
  description: 'CC cédula de ciudadanía, CE cédula de extranjería, TI tarjeta de identidad, PP passport, PEP/PPT permits for Venezuelan nationals, NIT tax id',
})
const DocumentNumber = Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9-]{2,19}$', description: 'letters, digits and dashes, 3 to 20 characters' })
const Name = Type.String({ minLength: 1, maxLength: 100 })
const Text = Type.String({ minLength: 1, maxLength: 200 })
const Day = Type.String({ format: 'date', description: 'YYYY-MM-DD, not in the future' })
const Email = Type.String({ format: 'email', maxLength: 254 })
const Phone = Type.String({ pattern: '^\\+?[0-9]{7,15}$', description: 'digits with an optional leading +, e.g. +573001234567' })
const CityId = Type.String({ format: 'uuid', description: 'id of a city of GET /cities' })
const Amount = Type.String({ pattern: MONEY_INPUT_PATTERN, description: 'non-negative decimal string', examples: ['4500000.00'] })

const naturalFields = {
  firstName: Name,
  middleName: Type.Optional(Name),
  lastName: Name,
  secondLastName: Type.Optional(Name),
  documentType: DocumentType,
  documentNumber: DocumentNumber,
  birthDate: Type.Optional(Day),
  gender: Type.Optional(Type.Enum(['female', 'male', 'other'])),
  email: Type.Optional(Email),
  phone: Type.Optional(Phone),
  address: Type.Optional(Text),
  cityId: Type.Optional(CityId),
  monthlyIncome: Type.Optional(Amount),
  employmentType: Type.Optional(Type.Enum(['formal', 'informal', 'independent', 'unemployed'])),
  employerName: Type.Optional(Text),
  occupation: Type.Optional(Text),
  employmentStartDate: Type.Optional(Day),
}

const LegalRepresentative = Type.Object({
  firstName: Name,
  lastName: Name,
  documentType: DocumentType,
  documentNumber: DocumentNumber,
  email: Type.Optional(Email),
  phone: Type.Optional(Phone),
}, { additionalProperties: false })

const legalFields = {
  businessName: Text,
  tradeName: Type.Optional(Text),
  documentType: DocumentType,
  documentNumber: DocumentNumber,
  taxId: Type.Optional(Type.String({ pattern: '^[0-9]{6,12}-[0-9]$', description: 'NIT with its verification digit, e.g. 900123456-7' })),
  legalRepresentative: Type.Optional(LegalRepresentative),
  email: Type.Optional(Email),
  phone: Type.Optional(Phone),
  address: Type.Optional(Text),
  cityId: Type.Optional(CityId),
  incorporationDate: Type.Optional(Day),
  economicActivity: Type.Optional(Type.String({ pattern: '^[0-9]{4}$', description: 'CIIU activity code' })),
  monthlyIncome: Type.Optional(Amount),
}

export const NaturalInput = Type.Object(naturalFields, { additionalProperties: false })
export const LegalInput = Type.Object(legalFields, { additionalProperties: false })
export const NaturalPatch = Type.Partial(NaturalInput, { additionalProperties: false, minProperties: 1 })
export const LegalPatch = Type.Partial(LegalInput, { additionalProperties: false, minProperties: 1 })

const fileIdKeys = { '^[A-Za-z]+FileID$': Type.String({ format: 'uuid', description: 'id of the current file of a campo (WorkCertificateFileID for work-certificate)' }) }

const NaturalView = Type.Object({
  ...naturalFields,
  age: Type.Optional(Type.Integer({ description: 'completed years, from birthDate' })),
}, { patternProperties: fileIdKeys, description: 'the natural person, with `<Campo>FileID` for each current file' })

const LegalView = Type.Object(legalFields, { patternProperties: fileIdKeys, description: 'the legal person, with `<Campo>FileID` for each current file' })

export const ProfileFileField = Type.Enum(allProfileFileFields, { description: 'the profile file (campo)' })

export const ProfileFile = Type.Object({
  field: Type.String({ description: 'campo' }),
  fileIdKey: Type.String({ description: 'key of the file id on the person object, e.g. WorkCertificateFileID' }),
  fileId: Uuid,
  contentType: Type.String({ description: 'sniffed from the bytes on upload' }),
  size: Type.Integer(),
  sha256: Type.String(),
  filename: Type.String(),
  attachedAt: Timestamp,
  url: Type.String({ description: 'where the bytes are served (GET /v1/debtor/{debtorId}/profile/{campo}/{fileId})' }),
})

export const ProfileSchema = Type.Object({
  ID: Uuid,
  type: Type.Enum(['natural', 'legal']),
  entityID: Type.String({ format: 'uuid', description: 'the organization' }),
  isCopy: Type.Boolean({ description: 'copied from another profile (POST /profiles/{id}/copy)' }),
  copiedFromID: Type.Union([Uuid, Type.Null()]),
  active: Type.Boolean(),
  ownerID: Type.String({ description: 'the user or client that created it' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  entity: Type.Optional(Type.Object({ ID: Uuid, name: Type.String(), active: Type.Boolean() }, { description: 'expand=entity: the organization' })),
  natural: Type.Optional(Type.Union([NaturalView, Type.Null()], { description: 'expand=natural; null on legal profiles' })),
  legal: Type.Optional(Type.Union([LegalView, Type.Null()], { description: 'expand=legal; null on natural profiles' })),
  city: Type.Optional(Type.Union([CitySchema, Type.Null()], { description: 'expand=city: the person\'s city, null when none' })),
  files: Type.Optional(Type.Array(ProfileFile, { description: 'single-profile reads: the current file of each campo' })),
  sharedWith: Type.Optional(Type.Array(Type.String(), { description: 'single-profile reads: users the profile is shared with' })),
  deactivationReason: Type.Optional(Type.Union([Type.String(), Type.Null()])),
})

export const ProfileEnvelope = Type.Object({ message: Type.String(), data: ProfileSchema })

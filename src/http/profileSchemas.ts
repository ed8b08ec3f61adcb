import { type TNull, type TOptional, type TSchema, type TUnion, Type } from 'typebox'
import { allProfileFileFields } from '../events/profile.js'
import { MONEY_INPUT_PATTERN } from '../shared/money.js'
import { CitySchema } from './cities.js'
import { NonBlankText, Timestamp, Uuid } from './schemas.js'

const DocumentType = Type.Enum(['CC', 'CE', 'TI', 'PP', 'PEP', 'PPT', 'NIT'], {
  description: 'CC cédula de ciudadanía, CE cédula de extranjería, TI tarjeta de identidad, PP passport, PEP/PPT permits for Venezuelan nationals, NIT tax id',
})
const DocumentNumber = Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9-]{2,19}$', description: 'letters, digits and dashes, 3 to 20 characters' })
/** A person's name as given: not blank, no control characters. */
const Name = NonBlankText({ maxLength: 100 })
const BusinessName = NonBlankText({ maxLength: 200 })
/**
 * Names as a profile shows them: whatever was recorded, blank ones from before NonBlankText included (the answer's
 * serializer checks a value against each branch of a union, so the request schema would fail such a profile).
 */
const RecordedName = Type.String()
const Text = Type.String({ minLength: 1, maxLength: 200 })
const Day = Type.String({ format: 'date', description: 'YYYY-MM-DD, not in the future' })
const Email = Type.String({ format: 'email', maxLength: 254 })
const Phone = Type.String({ pattern: '^\\+?[0-9]{7,15}$', description: 'digits with an optional leading +, e.g. +573001234567' })
const CityId = Type.String({ format: 'uuid', description: 'id of a city of GET /cities' })
const Amount = Type.String({ pattern: MONEY_INPUT_PATTERN, description: 'non-negative decimal string', examples: ['4500000.00'] })

type Fields = Record<string, TSchema>
/** A person given whole: the fields not required may be left out. */
type InputFields<F extends Fields, R extends keyof F> = { [K in keyof F]: K extends R ? F[K] : TOptional<F[K]> }
/** A change to a person: every field may be left out, and those not required may be null, which clears them. */
type PatchFields<F extends Fields, R extends keyof F> = { [K in keyof F]: TOptional<K extends R ? F[K] : TUnion<[F[K], TNull]>> }

/** A person's fields (in the order a profile shows them) as given on creation and on PATCH, from one list and the names of those required. */
const personFields = <F extends Fields, R extends keyof F & string>(fields: F, required: readonly R[]) => {
  const isRequired = (key: string) => required.some((name) => name === key)
  const entries = Object.entries(fields)
  const input = Object.fromEntries(entries.map(([key, schema]) => [key, isRequired(key) ? schema : Type.Optional(schema)]))
  const patch = Object.fromEntries(entries.map(([key, schema]) => [key, Type.Optional(isRequired(key) ? schema : Type.Union([schema, Type.Null()]))]))
  // Object.fromEntries cannot say which schema each key holds; the maps above make what these types say.
  return { input: input as InputFields<F, R>, patch: patch as PatchFields<F, R> }
}

const naturalFields = personFields({
  firstName: Name,
  middleName: Name,
  lastName: Name,
  secondLastName: Name,
  documentType: DocumentType,
  documentNumber: DocumentNumber,
  birthDate: Day,
  gender: Type.Enum(['female', 'male', 'other']),
  email: Email,
  phone: Phone,
  address: Text,
  cityId: CityId,
  monthlyIncome: Amount,
  employmentType: Type.Enum(['formal', 'informal', 'independent', 'unemployed']),
  employerName: Text,
  occupation: Text,
  employmentStartDate: Day,
}, ['firstName', 'lastName', 'documentType', 'documentNumber'])

const legalRepresentativeFields = {
  firstName: Name,
  lastName: Name,
  documentType: DocumentType,
  documentNumber: DocumentNumber,
  email: Type.Optional(Email),
  phone: Type.Optional(Phone),
}
const LegalRepresentative = Type.Object(legalRepresentativeFields, { additionalProperties: false })

const legalFields = personFields({
  businessName: BusinessName,
  tradeName: Text,
  documentType: DocumentType,
  documentNumber: DocumentNumber,
  taxId: Type.String({ pattern: '^[0-9]{6,12}-[0-9]$', description: 'NIT with its verification digit, e.g. 900123456-7' }),
  legalRepresentative: LegalRepresentative,
  email: Email,
  phone: Phone,
  address: Text,
  cityId: CityId,
  incorporationDate: Day,
  economicActivity: Type.String({ pattern: '^[0-9]{4}$', description: 'CIIU activity code' }),
  monthlyIncome: Amount,
}, ['businessName', 'documentType', 'documentNumber'])

export const NaturalInput = Type.Object(naturalFields.input, { additionalProperties: false })
export const LegalInput = Type.Object(legalFields.input, { additionalProperties: false })
export const NaturalPatch = Type.Object(naturalFields.patch, { additionalProperties: false, minProperties: 1 })
export const LegalPatch = Type.Object(legalFields.patch, { additionalProperties: false, minProperties: 1 })

const fileIdKeys = { '^[A-Za-z]+FileID$': Type.String({ format: 'uuid', description: 'id of the current file of a campo (WorkCertificateFileID for work-certificate)' }) }

const NaturalView = Type.Object({
  ...naturalFields.input,
  firstName: RecordedName,
  middleName: Type.Optional(RecordedName),
  lastName: RecordedName,
  secondLastName: Type.Optional(RecordedName),
  age: Type.Optional(Type.Integer({ description: 'completed years, from birthDate' })),
}, { patternProperties: fileIdKeys, description: 'the natural person, with `<Campo>FileID` for each current file' })

const LegalRepresentativeView = Type.Object({ ...legalRepresentativeFields, firstName: RecordedName, lastName: RecordedName }, { additionalProperties: false })

const LegalView = Type.Object({
  ...legalFields.input,
  businessName: RecordedName,
  legalRepresentative: Type.Optional(LegalRepresentativeView),
}, { patternProperties: fileIdKeys, description: 'the legal person, with `<Campo>FileID` for each current file' })

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

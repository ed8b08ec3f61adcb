import type { Event, RequestKey } from './types.js'

/** Colombian identity documents: cédula de ciudadanía, de extranjería, tarjeta de identidad, passport, PEP/PPT, NIT. */
export type DocumentType = 'CC' | 'CE' | 'TI' | 'PP' | 'PEP' | 'PPT' | 'NIT'

export type EmploymentType = 'formal' | 'informal' | 'independent' | 'unemployed'

/** A natural person. Scoring reads monthlyIncome, employmentType and birthDate (age is derived). */
export interface NaturalPerson {
  firstName: string
  middleName?: string
  lastName: string
  secondLastName?: string
  documentType: DocumentType
  documentNumber: string
  /** YYYY-MM-DD */
  birthDate?: string
  gender?: 'female' | 'male' | 'other'
  email?: string
  phone?: string
  address?: string
  /** Id of a city of GET /cities. */
  cityId?: string
  /** Decimal string in the organization's currency. */
  monthlyIncome?: string
  employmentType?: EmploymentType
  employerName?: string
  occupation?: string
  /** YYYY-MM-DD */
  employmentStartDate?: string
}

export interface LegalRepresentative {
  firstName: string
  lastName: string
  documentType: DocumentType
  documentNumber: string
  email?: string
  phone?: string
}

/** A legal person (company). */
export interface LegalPerson {
  businessName: string
  tradeName?: string
  documentType: DocumentType
  documentNumber: string
  /** NIT with its verification digit, e.g. 900123456-7. */
  taxId?: string
  legalRepresentative?: LegalRepresentative
  email?: string
  phone?: string
  address?: string
  cityId?: string
  /** YYYY-MM-DD */
  incorporationDate?: string
  /** CIIU activity code. */
  economicActivity?: string
  monthlyIncome?: string
}

export type ProfileType = 'natural' | 'legal'

/**
 * The files (campos) a profile may carry, with the profile types that accept
 * each. A file of campo `work-certificate` appears on the profile's person
 * object as `WorkCertificateFileID` (see `fileIdKey`).
 */
export const profileFileFields = {
  'identity-document-front': ['natural'],
  'identity-document-back': ['natural'],
  'work-certificate': ['natural'],
  'income-certificate': ['natural'],
  'pension-certificate': ['natural'],
  'utility-bill': ['natural', 'legal'],
  'bank-statement': ['natural', 'legal'],
  'tax-return': ['natural', 'legal'],
  'rut': ['natural', 'legal'],
  'chamber-of-commerce-certificate': ['legal'],
  'financial-statements': ['legal'],
  'legal-representative-document': ['legal'],
  'shareholder-structure': ['legal'],
} as const satisfies Record<string, readonly ProfileType[]>

export type ProfileFileField = keyof typeof profileFileFields

export const allProfileFileFields = Object.keys(profileFileFields) as ProfileFileField[]

export const isProfileFileField = (value: string): value is ProfileFileField => Object.hasOwn(profileFileFields, value)

export const acceptsFileField = (type: ProfileType, field: string): boolean =>
  isProfileFileField(field) && (profileFileFields[field] as readonly ProfileType[]).includes(type)

/** `work-certificate` → `WorkCertificateFileID`: the key webhook templates reference. */
export const fileIdKey = (field: string): `${string}FileID` =>
  `${field.split('-').map((part) => part.charAt(0).toUpperCase() + part.slice(1)).join('')}FileID`

/** A profile file as recorded: bytes in the FileStore under `fileId`, content type sniffed on upload. */
export interface ProfileFileRef {
  field: string
  fileId: string
  contentType: string
  size: number
  sha256: string
  filename: string
  attachedAt: string
}

export type ProfileCreated = Event<'ProfileCreated', {
  profileId: string
  organizationId: string
  /** The user or client that created it. */
  ownerId: string
  type: ProfileType
  natural: NaturalPerson | null
  legal: LegalPerson | null
  /** True when copied from another profile (e.g. into another organization). */
  isCopy: boolean
  copiedFrom: { profileId: string; organizationId: string } | null
  createdAt: string
  /** A copy carries the source's current files (same bytes, same file ids). Absent on profiles created from scratch. */
  files?: ProfileFileRef[]
  /** The creator's `Idempotency-Key` and a hash of its request (a copy's: the source's id); absent when it sent none. */
  idempotency?: ProfileRequestKey
}>

export type ProfileRequestKey = RequestKey

/**
 * Changes to a person: each field given is set to its value, and an optional
 * field given as null is cleared. Required fields cannot be null. (Optional
 * keys are told by `{} extends Pick`, which holds with exactOptionalPropertyTypes too.)
 */
export type PersonChanges<T> = { [K in keyof T]?: {} extends Pick<T, K> ? T[K] | null : T[K] }

/** A person with its changes applied: the fields given set, those given as null removed. */
export const applyPersonChanges = <T extends object>(current: T | null, changes: PersonChanges<NoInfer<T>> | undefined): T | null => {
  if (current === null || changes === undefined) return current
  const next = { ...current, ...changes }
  for (const [key, value] of Object.entries(changes)) {
    if (value === null) Reflect.deleteProperty(next, key)
  }
  return next
}

/** Carries only the fields that changed, with their new values; null: the field was cleared. */
export type ProfileUpdated = Event<'ProfileUpdated', {
  profileId: string
  organizationId: string
  natural?: PersonChanges<NaturalPerson>
  legal?: PersonChanges<LegalPerson>
  updatedAt: string
}>
export type ProfileDeactivated = Event<'ProfileDeactivated', { profileId: string; organizationId: string; reason: string; at: string }>
export type ProfileActivated = Event<'ProfileActivated', { profileId: string; organizationId: string; at: string }>
export type ProfileShared = Event<'ProfileShared', { profileId: string; organizationId: string; userId: string; sharedBy: string; at: string }>
export type ProfileUnshared = Event<'ProfileUnshared', { profileId: string; organizationId: string; userId: string; at: string }>
/** A profile file (`campo`, e.g. work-certificate) stored in the FileStore; sets `<Campo>FileID` on the profile. */
export type ProfileFileAttached = Event<'ProfileFileAttached', ProfileFileRef & {
  profileId: string
  organizationId: string
}>

export type ProfileEvent =
  | ProfileCreated
  | ProfileUpdated
  | ProfileDeactivated
  | ProfileActivated
  | ProfileShared
  | ProfileUnshared
  | ProfileFileAttached

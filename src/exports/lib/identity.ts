import type { DocumentType, LegalPerson, NaturalPerson, ProfileType } from '../../events/profile.js'
import { cityCatalogue } from '../../reference/cities.js'

/** What every debtor document of the read models carries (a profile, or the debtor summary on a credit). */
export interface PersonRecord {
  type: ProfileType
  natural: NaturalPerson | null
  legal: LegalPerson | null
}

/** A debtor's identity and contact fields, flattened for files. */
export interface Identity {
  documentType: DocumentType | null
  documentNumber: string
  /** Natural persons: given names and surnames; companies: the business name. */
  fullName: string
  firstName: string
  middleName: string
  lastName: string
  secondLastName: string
  businessName: string
  tradeName: string
  email: string
  phone: string
  address: string
  cityId: string | null
  monthlyIncome: string | null
}

const joined = (...parts: Array<string | undefined>) => parts.filter((p) => p !== undefined && p !== '').join(' ')

export const identityOf = (person: PersonRecord): Identity => {
  const { natural, legal } = person
  const common = natural ?? legal
  return {
    documentType: common?.documentType ?? null,
    documentNumber: common?.documentNumber ?? '',
    fullName: natural !== null ? joined(natural.firstName, natural.middleName, natural.lastName, natural.secondLastName) : legal?.businessName ?? '',
    firstName: natural?.firstName ?? '',
    middleName: natural?.middleName ?? '',
    lastName: natural?.lastName ?? '',
    secondLastName: natural?.secondLastName ?? '',
    businessName: legal?.businessName ?? '',
    tradeName: legal?.tradeName ?? '',
    email: common?.email ?? '',
    phone: common?.phone ?? '',
    address: common?.address ?? '',
    cityId: common?.cityId ?? null,
    monthlyIncome: common?.monthlyIncome ?? null,
  }
}

const NIT_WEIGHTS = [3, 7, 13, 17, 19, 23, 29, 37, 41, 43, 47, 53, 59, 67, 71]

/** The verification digit (DV) of a NIT, by DIAN's modulus-11 algorithm; null when the number is not 1–15 digits. */
export const nitVerificationDigit = (nit: string): string | null => {
  const digits = nit.replace(/[.\s]/g, '')
  if (!/^\d{1,15}$/.test(digits)) return null
  const sum = [...digits].reverse().reduce((total, digit, i) => total + Number(digit) * (NIT_WEIGHTS[i] ?? 0), 0)
  const remainder = sum % 11
  return String(remainder > 1 ? 11 - remainder : remainder)
}

/** A phone as bureaus and invoicing systems take it: digits only (`+57 300 123 4567` → `573001234567`). */
export const phoneDigits = (phone: string): string => phone.replace(/\D/g, '')

/** The DV of a NIT document, else null. */
export const verificationDigitOf = (identity: Identity): string | null =>
  identity.documentType === 'NIT' ? nitVerificationDigit(identity.documentNumber) : null

/** A city of the DIVIPOLA catalogue with its DANE codes as files write them (`05001`, department `05`). */
export interface CityCodes {
  daneCode: string
  name: string
  departmentCode: string
  department: string
}

export const cityCodes = (cityId: string | null): CityCodes | null => {
  const city = cityId === null ? null : cityCatalogue().get(cityId)
  if (city === null) return null
  return {
    daneCode: String(city.daneCode).padStart(5, '0'), name: city.name,
    departmentCode: String(city.state.daneCode).padStart(2, '0'), department: city.state.name,
  }
}

/** The debtor on a credit as a person record (an empty one when the profile was never projected). */
export const debtorIdentity = (debtor: PersonRecord | null): Identity =>
  identityOf(debtor ?? { type: 'natural', natural: null, legal: null })

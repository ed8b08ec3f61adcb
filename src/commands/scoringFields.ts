import type { ProfileState } from './profile.js'

/**
 * The scoring field catalogue: the only names a scoring variable or a condition
 * may use. Each is read from a profile (some derived with the clock) or given
 * directly in an evaluation request.
 */
export type ScoringFieldKind = 'integer' | 'money' | 'string' | 'boolean'

export const scoringFieldCatalogue = {
  profileType: { kind: 'string', description: '`natural` or `legal`' },
  age: { kind: 'integer', description: 'Whole years since `natural.birthDate`, at the moment of evaluation (UTC)' },
  monthlyIncome: { kind: 'money', description: 'Monthly income (`natural.monthlyIncome` or `legal.monthlyIncome`), a decimal string' },
  employmentType: { kind: 'string', description: '`natural.employmentType`: `formal`, `informal`, `independent` or `unemployed`' },
  employmentMonths: { kind: 'integer', description: 'Whole months since `natural.employmentStartDate`' },
  hasEmployer: { kind: 'boolean', description: 'True when `natural.employerName` is set' },
  occupation: { kind: 'string', description: '`natural.occupation`' },
  gender: { kind: 'string', description: '`natural.gender`: `female`, `male` or `other`' },
  documentType: { kind: 'string', description: 'Identity document type: `CC`, `CE`, `TI`, `PP`, `PEP`, `PPT` or `NIT`' },
  cityId: { kind: 'string', description: 'Id of the city of residence or domicile' },
  hasEmail: { kind: 'boolean', description: 'True when the profile has an e-mail address' },
  hasPhone: { kind: 'boolean', description: 'True when the profile has a phone number' },
  economicActivity: { kind: 'string', description: '`legal.economicActivity` (CIIU code)' },
  yearsInBusiness: { kind: 'integer', description: 'Whole years since `legal.incorporationDate`' },
  hasLegalRepresentative: { kind: 'boolean', description: 'True when `legal.legalRepresentative` is set' },
} as const satisfies Record<string, { kind: ScoringFieldKind; description: string }>

export type ScoringField = keyof typeof scoringFieldCatalogue

export const scoringFieldNames = Object.keys(scoringFieldCatalogue) as ScoringField[]

export const isScoringField = (name: string): name is ScoringField => Object.hasOwn(scoringFieldCatalogue, name)

/** Values of the fields known for one debtor; money as a decimal string, integers as numbers. */
export type ScoringFieldValues = Partial<Record<ScoringField, string | number | boolean>>

const datePart = (iso: string) => {
  const [year = 0, month = 0, day = 0] = iso.slice(0, 10).split('-').map(Number)
  return { year, month, day }
}

/** Whole months from a YYYY-MM-DD date to `now` (UTC); 0 for dates in the future. */
export const wholeMonthsSince = (date: string, now: Date): number => {
  const from = datePart(date)
  const months = (now.getUTCFullYear() - from.year) * 12 + (now.getUTCMonth() + 1 - from.month) - (now.getUTCDate() < from.day ? 1 : 0)
  return Math.max(0, months)
}

/** Whole years from a YYYY-MM-DD date to `now` (UTC): an age. Someone born on 29 February turns a year older on 1 March in common years. */
export const wholeYearsSince = (date: string, now: Date): number => Math.floor(wholeMonthsSince(date, now) / 12)

const present = (value: string | undefined): value is string => value !== undefined && value.trim() !== ''

/** The scoring fields of a profile as of `now`; fields the profile lacks are absent. */
export const scoringFieldsOfProfile = (profile: ProfileState, now: Date): ScoringFieldValues => {
  const fields: ScoringFieldValues = { profileType: profile.profileType }
  const set = <K extends ScoringField>(key: K, value: string | number | boolean | undefined) => {
    if (value !== undefined) fields[key] = value
  }
  const natural = profile.natural
  if (profile.profileType === 'natural' && natural !== null) {
    set('age', natural.birthDate === undefined ? undefined : wholeYearsSince(natural.birthDate, now))
    set('monthlyIncome', natural.monthlyIncome)
    set('employmentType', natural.employmentType)
    set('employmentMonths', natural.employmentStartDate === undefined ? undefined : wholeMonthsSince(natural.employmentStartDate, now))
    set('hasEmployer', present(natural.employerName))
    set('occupation', natural.occupation)
    set('gender', natural.gender)
    set('documentType', natural.documentType)
    set('cityId', natural.cityId)
    set('hasEmail', present(natural.email))
    set('hasPhone', present(natural.phone))
  }
  const legal = profile.legal
  if (profile.profileType === 'legal' && legal !== null) {
    set('monthlyIncome', legal.monthlyIncome)
    set('documentType', legal.documentType)
    set('cityId', legal.cityId)
    set('hasEmail', present(legal.email))
    set('hasPhone', present(legal.phone))
    set('economicActivity', legal.economicActivity)
    set('yearsInBusiness', legal.incorporationDate === undefined ? undefined : wholeYearsSince(legal.incorporationDate, now))
    set('hasLegalRepresentative', legal.legalRepresentative !== undefined)
  }
  return fields
}

import { defineDataSet } from '../dataSets.js'
import { boolean, date, money, text, timestamp } from '../lib/columns.js'
import { debtorColumn as d } from '../lib/debtorColumns.js'
import { debtorRecord, type DebtorRecord } from '../lib/debtorBooks.js'
import { instantsIn, periodOf } from '../lib/period.js'

const representative = (r: DebtorRecord) => r.profile.legal?.legalRepresentative

/** The debtor master file: one row per profile (natural person or company) created in the period, active or not. */
export const debtorsDataSet = defineDataSet({
  type: 'debtors',
  description: 'debtors (profiles) created in the period',
  columns: [
    d.id, d.type,
    boolean<DebtorRecord>('active', 'the profile is active', (r) => r.profile.active),
    d.documentType, d.documentNumber, d.verificationDigit, d.name,
    text<DebtorRecord>('first_name', 'natural persons: first name', (r) => r.identity.firstName),
    text<DebtorRecord>('middle_name', 'natural persons: middle name', (r) => r.identity.middleName),
    text<DebtorRecord>('last_name', 'natural persons: first surname', (r) => r.identity.lastName),
    text<DebtorRecord>('second_last_name', 'natural persons: second surname', (r) => r.identity.secondLastName),
    text<DebtorRecord>('business_name', 'companies: business name (razón social)', (r) => r.identity.businessName),
    text<DebtorRecord>('trade_name', 'companies: trade name', (r) => r.identity.tradeName),
    text<DebtorRecord>('tax_id', 'companies: NIT with its verification digit as recorded', (r) => r.profile.legal?.taxId),
    date<DebtorRecord>('birth_date', 'natural persons', (r) => r.profile.natural?.birthDate),
    text<DebtorRecord>('gender', 'natural persons: female, male or other', (r) => r.profile.natural?.gender),
    date<DebtorRecord>('incorporation_date', 'companies', (r) => r.profile.legal?.incorporationDate),
    d.email, d.phone, d.address,
    text<DebtorRecord>('city_id', 'city id of GET /cities', (r) => r.profile.cityId),
    d.cityDaneCode, d.cityName,
    text<DebtorRecord>('department_dane_code', 'DANE code of the department', (r) => r.city?.departmentCode),
    text<DebtorRecord>('department', 'department', (r) => r.city?.department),
    money<DebtorRecord>('monthly_income', 'monthly income as recorded', (r) => r.identity.monthlyIncome),
    text<DebtorRecord>('employment_type', 'natural persons: formal, informal, independent or unemployed', (r) => r.profile.natural?.employmentType),
    text<DebtorRecord>('employer_name', 'natural persons', (r) => r.profile.natural?.employerName),
    text<DebtorRecord>('occupation', 'natural persons', (r) => r.profile.natural?.occupation),
    date<DebtorRecord>('employment_start_date', 'natural persons', (r) => r.profile.natural?.employmentStartDate),
    text<DebtorRecord>('economic_activity', 'companies: CIIU code', (r) => r.profile.legal?.economicActivity),
    text<DebtorRecord>('legal_representative_name', 'companies', (r) => {
      const person = representative(r)
      return person === undefined ? null : `${person.firstName} ${person.lastName}`
    }),
    text<DebtorRecord>('legal_representative_document_type', 'companies', (r) => representative(r)?.documentType),
    text<DebtorRecord>('legal_representative_document_number', 'companies', (r) => representative(r)?.documentNumber),
    boolean<DebtorRecord>('is_copy', 'copied from another profile', (r) => r.profile.isCopy),
    text<DebtorRecord>('owner_id', 'user or client that created it', (r) => r.profile.ownerId),
    timestamp<DebtorRecord>('created_at', 'when it was created', (r) => r.profile.createdAt),
    timestamp<DebtorRecord>('updated_at', 'last change', (r) => r.profile.updatedAt),
  ],
  async *rows(body, context) {
    for await (const profile of context.queries.profiles.stream(context.organizationId, instantsIn('createdAt', periodOf(body, context.requestedAt)))) {
      yield debtorRecord(profile)
    }
  },
  count: (body, context) => context.queries.profiles.count(context.organizationId, instantsIn('createdAt', periodOf(body, context.requestedAt))),
})

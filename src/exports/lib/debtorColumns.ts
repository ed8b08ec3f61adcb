import type { Column } from '../csv.js'
import type { DebtorRecord } from './debtorBooks.js'
import { verificationDigitOf } from './identity.js'
import { text } from './columns.js'

/** Who the debtor is and how to reach them, as the debtors files write it. */
export const debtorColumn = {
  id: text<DebtorRecord>('debtor_id', 'debtor (profile) id', (d) => d.profile._id),
  type: text<DebtorRecord>('debtor_type', '`natural` or `legal`', (d) => d.profile.type),
  documentType: text<DebtorRecord>('document_type', 'CC, CE, TI, PP, PEP, PPT or NIT', (d) => d.identity.documentType),
  documentNumber: text<DebtorRecord>('document_number', 'document number', (d) => d.identity.documentNumber),
  verificationDigit: text<DebtorRecord>('verification_digit', 'NIT verification digit (DIAN algorithm)', (d) => verificationDigitOf(d.identity)),
  name: text<DebtorRecord>('name', 'full name, or business name', (d) => d.identity.fullName),
  email: text<DebtorRecord>('email', 'e-mail', (d) => d.identity.email),
  phone: text<DebtorRecord>('phone', 'phone', (d) => d.identity.phone),
  address: text<DebtorRecord>('address', 'address', (d) => d.identity.address),
  cityDaneCode: text<DebtorRecord>('city_dane_code', 'DANE code of the municipality', (d) => d.city?.daneCode),
  cityName: text<DebtorRecord>('city_name', 'municipality', (d) => d.city?.name),
} as const satisfies Record<string, Column<DebtorRecord>>

import type { DocumentType } from '../../events/profile.js'
import { money as decimalOf, toMoneyString } from '../../shared/money.js'
import { defineDataSet } from '../dataSets.js'
import { bookFigures, type BookFigures } from '../lib/bookFigures.js'
import { date, integer, money, text } from '../lib/columns.js'
import { isActiveIn, subledgerCredits } from '../lib/creditScopes.js'
import { debtorBooks, type DebtorBook } from '../lib/debtorBooks.js'
import { phoneDigits, verificationDigitOf } from '../lib/identity.js'
import { closingDay, periodOf } from '../lib/period.js'

interface Row {
  book: DebtorBook
  figures: BookFigures
  from: string | null
  to: string
  after: string | null
}

/** DIAN's identification document codes (electronic invoicing). */
export const dianDocumentCodes: Record<DocumentType, string> = { TI: '12', CC: '13', CE: '22', NIT: '31', PP: '41', PEP: '47', PPT: '48' }

/**
 * Debtors for invoicing, format A (those with a credit active in the period,
 * and those with collection costs collected in it on one paid off before): the buyer (adquirente) fields an
 * electronic-invoicing system needs (DIAN codes: person type, document type,
 * NIT verification digit, DANE place codes) and the amounts of the period to
 * invoice per debtor and currency: interest and collection costs collected.
 * Amounts are bases: taxes are the invoicing system's to apply. The service
 * records no fiscal responsibilities, so R-99-PN ("not applicable") is written.
 */
export const debtorsCreditActiveInvoicingADataSet = defineDataSet({
  type: 'debtors-credit-active-invoicing-a',
  description: 'debtors with a credit active in the period, or interest or collection costs collected in it on one paid off before, as invoicing buyers',
  columns: [
    text<Row>('TIPO_PERSONA', '1 company (persona jurídica), 2 natural person', (r) => (r.book.profile.type === 'legal' ? '1' : '2')),
    text<Row>('TIPO_DOCUMENTO', 'DIAN codes: 12 TI, 13 CC, 22 CE, 31 NIT, 41 PP, 47 PEP, 48 PPT',
      (r) => (r.book.identity.documentType === null ? null : dianDocumentCodes[r.book.identity.documentType])),
    text<Row>('NUMERO_DOCUMENTO', 'document number', (r) => r.book.identity.documentNumber),
    text<Row>('DV', 'NIT verification digit (DIAN algorithm)', (r) => verificationDigitOf(r.book.identity)),
    text<Row>('RAZON_SOCIAL', 'business name, or the natural person\'s full name', (r) => r.book.identity.fullName),
    text<Row>('PRIMER_NOMBRE', 'natural persons', (r) => r.book.identity.firstName),
    text<Row>('OTROS_NOMBRES', 'natural persons', (r) => r.book.identity.middleName),
    text<Row>('PRIMER_APELLIDO', 'natural persons', (r) => r.book.identity.lastName),
    text<Row>('SEGUNDO_APELLIDO', 'natural persons', (r) => r.book.identity.secondLastName),
    text<Row>('NOMBRE_COMERCIAL', 'companies: trade name', (r) => r.book.identity.tradeName),
    text<Row>('RESPONSABILIDAD_FISCAL', 'R-99-PN: not recorded by the service', () => 'R-99-PN'),
    text<Row>('CORREO_FACTURACION', 'e-mail the invoice goes to', (r) => r.book.identity.email),
    text<Row>('TELEFONO', 'phone, digits only', (r) => phoneDigits(r.book.identity.phone)),
    text<Row>('DIRECCION', 'address', (r) => r.book.identity.address),
    text<Row>('CODIGO_PAIS', 'ISO 3166 country', () => 'CO'),
    text<Row>('CODIGO_DEPARTAMENTO', 'DANE department code', (r) => r.book.city?.departmentCode),
    text<Row>('DEPARTAMENTO', 'department', (r) => r.book.city?.department),
    text<Row>('CODIGO_MUNICIPIO', 'DANE municipality code', (r) => r.book.city?.daneCode),
    text<Row>('MUNICIPIO', 'municipality', (r) => r.book.city?.name),
    text<Row>('MONEDA', 'ISO 4217 code of the amounts', (r) => r.book.currency),
    integer<Row>('CREDITOS_ACTIVOS', 'credits in this currency active in the period', (r) => r.book.credits.filter(({ credit }) => isActiveIn(credit, r.after)).length),
    date<Row>('PERIODO_DESDE', 'first day invoiced (empty: since the beginning)', (r) => r.from),
    date<Row>('PERIODO_HASTA', 'last day invoiced', (r) => r.to),
    money<Row>('INTERESES', 'interest collected in the period, net of interest a payoff credited to principal: negative when a payoff credited interest invoiced in an earlier period (the amount of a credit note)', (r) => r.figures.interestCollected),
    money<Row>('GASTOS_COBRANZA', 'collection costs collected in the period', (r) => r.figures.collectionCosts),
    money<Row>('TOTAL', 'interest plus collection costs', (r) =>
      toMoneyString(decimalOf(r.figures.interestCollected).plus(r.figures.collectionCosts), r.book.currency)),
  ],
  async *rows(body, context) {
    const period = periodOf(body, context.requestedAt)
    const from = period.after === null ? null : period.after.slice(0, 10)
    const to = closingDay(period.before)
    // The subledgers' credits: money collected after a payoff (collection costs of a late order) is invoiced in its period too.
    for await (const book of debtorBooks(context, period, subledgerCredits)) {
      const row = { book, figures: bookFigures(book, period.after), from, to, after: period.after }
      // A debtor whose credits were all paid off before the period is a buyer only of what was collected on them in it.
      const invoiced = decimalOf(row.figures.interestCollected).plus(row.figures.collectionCosts)
      if (book.credits.some(({ credit }) => isActiveIn(credit, period.after)) || !invoiced.isZero()) yield row
    }
  },
})

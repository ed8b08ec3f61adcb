import type { DocumentType } from '../../events/profile.js'
import { defineDataSet } from '../dataSets.js'
import { date, decimal, integer, text } from '../lib/columns.js'
import { verificationDigitOf } from '../lib/identity.js'
import { portfolioOf, riskCategory, type PositionedCredit } from '../lib/positions.js'
import { bureauCount, bureauRows, type BureauRow } from '../lib/bureau.js'

type Row = BureauRow

/** Document types of format B. */
export const bureauBDocumentCodes: Record<DocumentType, string> = { CC: '01', NIT: '02', CE: '03', TI: '04', PP: '05', PEP: '06', PPT: '07' }

/** Arrears bracket of format B: 00 current, 01 1–30, 02 31–60, 03 61–90, 04 91–120, 05 more than 120 days. */
export const bureauBArrearsBracket = (days: number): string => {
  if (days === 0) return '00'
  return `0${Math.min(5, Math.ceil(days / 30))}`
}

/** 01 current, 02 past due, 03 paid off. */
const obligationState = (row: PositionedCredit): string => {
  if (row.position.state === 'Pagado') return '03'
  return row.position.daysPastDue > 0 ? '02' : '01'
}

const cents = decimal(2)

/**
 * Credit-bureau report, format B (fixed columns in the spirit of
 * TransUnion's layout): the same obligations as format A (active in the
 * period, as they stood at its end), with the person split into type,
 * document with verification digit, surnames and names or business name,
 * balances split into principal and interest, and two decimals.
 */
export const creditBureauBDataSet = defineDataSet({
  type: 'credit-bureau-b',
  description: 'bureau report format B: obligations active in the period, as they stood at its end',
  columns: [
    text<Row>('TIPO_PERSONA', '1 natural person, 2 company', (r) => (r.credit.debtor?.type === 'legal' ? '2' : '1')),
    text<Row>('TIPO_DOCUMENTO', 'document type: 01 CC, 02 NIT, 03 CE, 04 TI, 05 PP, 06 PEP, 07 PPT',
      (r) => (r.identity.documentType === null ? null : bureauBDocumentCodes[r.identity.documentType])),
    text<Row>('NUMERO_DOCUMENTO', 'document number', (r) => r.identity.documentNumber),
    text<Row>('DIGITO_VERIFICACION', 'NIT verification digit (DIAN algorithm); empty for other documents', (r) => verificationDigitOf(r.identity)),
    text<Row>('PRIMER_APELLIDO', 'first surname (natural persons)', (r) => r.identity.lastName),
    text<Row>('SEGUNDO_APELLIDO', 'second surname (natural persons)', (r) => r.identity.secondLastName),
    text<Row>('NOMBRES', 'given names (natural persons)', (r) => [r.identity.firstName, r.identity.middleName].filter((n) => n !== '').join(' ')),
    text<Row>('RAZON_SOCIAL', 'business name (companies)', (r) => r.identity.businessName),
    text<Row>('NUMERO_OBLIGACION', 'the credit id', (r) => r.credit._id),
    text<Row>('TIPO_OBLIGACION', 'CONSUMO or COMERCIAL', (r) => portfolioOf(r.credit).toUpperCase()),
    date<Row>('FECHA_CORTE', 'the cut: last day the period covers', (r) => r.cutDay),
    date<Row>('FECHA_INICIO', 'disbursement day', (r) => r.credit.disbursedAt),
    date<Row>('FECHA_TERMINACION', 'due date of the last installment', (r) => r.credit.maturityDate),
    text<Row>('ESTADO_OBLIGACION', '01 current, 02 past due, 03 paid off', (r) => obligationState(r)),
    text<Row>('EDAD_MORA', '00 current, 01 1–30, 02 31–60, 03 61–90, 04 91–120, 05 over 120 days', (r) => bureauBArrearsBracket(r.position.daysPastDue)),
    integer<Row>('DIAS_MORA', 'days past due of the oldest unpaid installment', (r) => r.position.daysPastDue),
    text<Row>('MONEDA', 'ISO 4217 code', (r) => r.credit.currency),
    cents<Row>('VALOR_INICIAL', 'amount lent', (r) => r.credit.principal),
    cents<Row>('SALDO_CAPITAL', 'principal owed', (r) => r.position.outstanding.principal),
    cents<Row>('SALDO_INTERESES', 'interest due and unpaid', (r) => r.position.overdue.interest),
    cents<Row>('VALOR_MORA', 'overdue principal plus interest', (r) => r.position.overdue.total),
    cents<Row>('VALOR_CUOTA', 'level monthly payment', (r) => r.credit.installmentAmount),
    integer<Row>('CUOTAS_PACTADAS', 'installments agreed', (r) => r.credit.installments.length),
    integer<Row>('CUOTAS_PAGADAS', 'installments paid in full at the cut', (r) => r.position.installmentsPaid),
    integer<Row>('CUOTAS_MORA', 'installments overdue at the cut', (r) => r.position.installmentsOverdue),
    date<Row>('FECHA_ULTIMO_PAGO', 'day of the last payment before the cut', (r) => r.position.lastPaymentAt),
    text<Row>('CALIFICACION', 'A–E by days past due and portfolio', (r) => riskCategory(portfolioOf(r.credit), r.position.daysPastDue)),
  ],
  rows: bureauRows,
  count: bureauCount,
})

import type { DocumentType } from '../../events/profile.js'
import { defineDataSet } from '../dataSets.js'
import { date, decimal, integer, text } from '../lib/columns.js'
import { cityCodes, phoneDigits } from '../lib/identity.js'
import { portfolioOf, riskCategory, type CreditPosition } from '../lib/positions.js'
import { bureauCount, bureauRows, type BureauRow } from '../lib/bureau.js'

type Row = BureauRow

/** Identification types of format A. */
export const bureauAIdentificationCodes: Record<DocumentType, string> = { CC: '1', NIT: '2', TI: '3', CE: '4', PP: '5', PEP: '6', PPT: '7' }

/** Novelty of the obligation at the cut: 01 current, 05 paid off, 06/07/08/09 thirty/sixty/ninety/120+ days past due. */
export const bureauANovelty = (position: Pick<CreditPosition, 'state' | 'daysPastDue'>): string => {
  if (position.state === 'Pagado') return '05'
  const days = position.daysPastDue
  if (days < 30) return '01'
  if (days < 60) return '06'
  if (days < 90) return '07'
  return days < 120 ? '08' : '09'
}

const whole = decimal(0)

/**
 * Credit-bureau report, format A (fixed columns in the spirit of
 * Datacrédito's reporting layout): one row per obligation active in the
 * period, as it stood at the period's end; values in whole currency units.
 */
export const creditBureauADataSet = defineDataSet({
  type: 'credit-bureau-a',
  description: 'bureau report format A: obligations active in the period, as they stood at its end',
  columns: [
    text<Row>('TIPO_IDENTIFICACION', 'identification type: 1 CC, 2 NIT, 3 TI, 4 CE, 5 PP, 6 PEP, 7 PPT',
      (r) => (r.identity.documentType === null ? null : bureauAIdentificationCodes[r.identity.documentType])),
    text<Row>('NUMERO_IDENTIFICACION', 'document number', (r) => r.identity.documentNumber),
    text<Row>('NOMBRE_COMPLETO', 'full name, or business name', (r) => r.identity.fullName),
    text<Row>('NUMERO_OBLIGACION', 'the credit id', (r) => r.credit._id),
    date<Row>('FECHA_CORTE', 'the cut: last day the period covers', (r) => r.cutDay),
    date<Row>('FECHA_APERTURA', 'disbursement day', (r) => r.credit.disbursedAt),
    date<Row>('FECHA_VENCIMIENTO', 'due date of the last installment', (r) => r.credit.maturityDate),
    text<Row>('CALIDAD_DEUDOR', '00: principal debtor (the service has no co-debtors)', () => '00'),
    text<Row>('TIPO_CARTERA', 'CONSUMO (natural persons) or COMERCIAL (companies)', (r) => portfolioOf(r.credit).toUpperCase()),
    text<Row>('PERIODICIDAD', '1: monthly installments', () => '1'),
    text<Row>('NOVEDAD', '01 current, 05 paid off, 06 30+, 07 60+, 08 90+, 09 120+ days past due', (r) => bureauANovelty(r.position)),
    whole<Row>('VALOR_INICIAL', 'amount lent', (r) => r.credit.principal),
    whole<Row>('SALDO_DEUDA', 'principal owed plus interest already due and unpaid', (r) => r.position.balance),
    whole<Row>('SALDO_MORA', 'overdue principal plus interest', (r) => r.position.overdue.total),
    whole<Row>('VALOR_CUOTA', 'level monthly payment', (r) => r.credit.installmentAmount),
    integer<Row>('TOTAL_CUOTAS', 'installments agreed', (r) => r.credit.installments.length),
    integer<Row>('CUOTAS_CANCELADAS', 'installments paid in full at the cut', (r) => r.position.installmentsPaid),
    integer<Row>('CUOTAS_EN_MORA', 'installments overdue at the cut', (r) => r.position.installmentsOverdue),
    integer<Row>('DIAS_MORA', 'days past due of the oldest unpaid installment', (r) => r.position.daysPastDue),
    date<Row>('FECHA_LIMITE_PAGO', 'due date of the oldest unpaid installment', (r) => r.position.nextDueDate),
    date<Row>('FECHA_ULTIMO_PAGO', 'day of the last payment before the cut', (r) => r.position.lastPaymentAt),
    text<Row>('CALIFICACION', 'A–E by days past due and portfolio', (r) => riskCategory(portfolioOf(r.credit), r.position.daysPastDue)),
    text<Row>('MONEDA', '1: Colombian pesos, 2: a foreign currency', (r) => (r.credit.currency === 'COP' ? '1' : '2')),
    text<Row>('CIUDAD_RESIDENCIA', 'DANE code of the debtor\'s municipality', (r) => cityCodes(r.identity.cityId)?.daneCode),
    text<Row>('DIRECCION', 'address', (r) => r.identity.address),
    text<Row>('TELEFONO', 'phone, digits only', (r) => phoneDigits(r.identity.phone)),
    text<Row>('CORREO_ELECTRONICO', 'e-mail', (r) => r.identity.email),
  ],
  rows: bureauRows,
  count: bureauCount,
})

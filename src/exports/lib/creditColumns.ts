import type { Column } from '../csv.js'
import type { CreditDoc } from '../../projections/credits.js'
import { portfolioOf } from './positions.js'
import { date, integer, money, text, timestamp } from './columns.js'

/** A column of some row type, read through a part of it (a credit inside a richer row). */
export const through = <Part, Row>(columns: ReadonlyArray<Column<Part>>, part: (row: Row) => Part): Column<Row>[] =>
  columns.map((column) => ({ ...column, value: (row: Row) => column.value(part(row)) }))

/** The fields of a credit most data sets start with, by name. */
export const creditColumn = {
  id: text<CreditDoc>('credit_id', 'credit id', (c) => c._id),
  lineId: text<CreditDoc>('credit_line_id', 'credit line (product) id', (c) => c.creditLineId),
  lineName: text<CreditDoc>('credit_line_name', 'credit line name when the credit was requested', (c) => c.creditLineName),
  debtorId: text<CreditDoc>('debtor_id', 'debtor (profile) id', (c) => c.debtorId),
  debtorType: text<CreditDoc>('debtor_type', '`natural` or `legal`', (c) => c.debtor?.type),
  portfolio: text<CreditDoc>('portfolio', '`consumo` (natural persons) or `comercial` (companies)', (c) => portfolioOf(c)),
  state: text<CreditDoc>('state', 'Solicitado, Aprobado, Rechazado, Anulado, Desembolsado or Pagado', (c) => c.status),
  currency: text<CreditDoc>('currency', 'ISO 4217 code', (c) => c.currency),
  principal: money<CreditDoc>('principal', 'amount lent', (c) => c.principal),
  term: integer<CreditDoc>('term_months', 'number of monthly installments', (c) => c.term),
  rate: money<CreditDoc>('annual_rate', 'annual rate, percent, fixed for the credit', (c) => c.rate),
  rateType: text<CreditDoc>('rate_type', '`FIXED` (effective annual, E.A.) or `FIXED_NOMINAL` (nominal annual paid monthly, N.M.V.)', (c) => c.rateType),
  monthlyRate: money<CreditDoc>('monthly_rate', 'monthly rate, percent (10 decimals)', (c) => c.monthlyRate),
  installmentAmount: money<CreditDoc>('installment_amount', 'level monthly payment', (c) => c.installmentAmount),
  totalInterest: money<CreditDoc>('total_interest', 'interest over the whole schedule', (c) => c.totalInterest),
  totalAmount: money<CreditDoc>('total_amount', 'principal plus total interest', (c) => c.totalAmount),
  requestedAt: timestamp<CreditDoc>('requested_at', 'when the credit was requested', (c) => c.requestedAt),
  approvedAt: timestamp<CreditDoc>('approved_at', 'when it was approved', (c) => c.approvedAt),
  disbursedAt: timestamp<CreditDoc>('disbursed_at', 'when it was disbursed', (c) => c.disbursedAt),
  paidAt: timestamp<CreditDoc>('paid_at', 'when nothing was owed any more', (c) => c.paidAt),
  firstDueDate: date<CreditDoc>('first_due_date', 'due date of installment 1 (final once disbursed)', (c) => c.firstDueDate ?? c.installments[0]?.dueDate),
  maturityDate: date<CreditDoc>('maturity_date', 'due date of the last installment (final once disbursed)', (c) => c.maturityDate ?? c.installments[c.installments.length - 1]?.dueDate),
  installmentsCount: integer<CreditDoc>('installments_count', 'installments in the schedule', (c) => c.installments.length),
} as const

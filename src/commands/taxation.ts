import type { TaxApplied, TaxBase, TaxRate } from '../events/tax.js'
import { money, roundToMinorUnit, toMoneyString } from '../shared/money.js'

export interface TaxSubject {
  appliesTo: TaxBase
  /** Id of the payment order, credit or fee being taxed. */
  subjectId: string
  /** The amount taxed: a payment order's collection costs, a credit's principal, a fee. Decimal string. */
  base: string
  currency: string
}

/**
 * The taxation rule: every active tax whose `applies_to` names the subject's
 * kind and whose `minimum_amount` the base reaches is applied once, for
 * base × percentage / 100 rounded half-up to the currency's minor unit. A tax
 * that comes to zero is not applied (and so not counted). Each application is
 * one `TaxApplied` event on the subject's own stream.
 */
export const taxApplications = (taxes: readonly TaxRate[], subject: TaxSubject, appliedAt: string): TaxApplied[] => {
  const base = money(subject.base)
  return taxes
    .filter((tax) => tax.isActive && tax.appliesTo.includes(subject.appliesTo) && base.gte(tax.minimumAmount))
    .map((tax) => ({ tax, amount: roundToMinorUnit(base.times(tax.percentage).dividedBy(100), subject.currency) }))
    .filter(({ amount }) => amount.gt(0))
    .map(({ tax, amount }) => ({ type: 'TaxApplied', data: {
      taxId: tax.taxId, organizationId: tax.organizationId, name: tax.name, type: tax.type, appliesTo: subject.appliesTo, subjectId: subject.subjectId,
      base: toMoneyString(base, subject.currency), percentage: money(tax.percentage).toFixed(), amount: toMoneyString(amount, subject.currency),
      currency: subject.currency, appliedAt,
    } }))
}

/**
 * The taxes of a payment order: its collection costs are what is charged for
 * collecting the payment, the one fee the service knows, so they are the base
 * of the taxes on `PAYMENT` and of those on `FEE`. A tax naming both applies
 * once (as `PAYMENT`).
 */
export const orderTaxApplications = (taxes: readonly TaxRate[], order: { orderId: string; collectionCosts: string; currency: string }, appliedAt: string): TaxApplied[] => {
  const subject = (appliesTo: TaxBase): TaxSubject => ({ appliesTo, subjectId: order.orderId, base: order.collectionCosts, currency: order.currency })
  const onPayment = taxApplications(taxes, subject('PAYMENT'), appliedAt)
  const onFee = taxApplications(taxes.filter((tax) => !tax.appliesTo.includes('PAYMENT')), subject('FEE'), appliedAt)
  return [...onPayment, ...onFee]
}

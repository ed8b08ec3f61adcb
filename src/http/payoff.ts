import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { Services } from '../services.js'
import { dayOf } from '../shared/amortization.js'
import { AppError, invalidFields, notFound } from '../shared/errors.js'
import { toMoneyText } from '../shared/exactDecimal.js'
import { payoffOf } from '../shared/payoff.js'
import { organizationOf } from './context.js'
import { failures, MoneyString, OrganizationHeaders, Uuid } from './schemas.js'

const Day = Type.String({ format: 'date', description: 'YYYY-MM-DD' })

const Payoff = Type.Object({
  creditId: Uuid,
  currency: Type.String(),
  date: Day,
  weighedOn: Type.String({ format: 'date', description: 'the day the payoff is weighed on: `date`, or the last due date up to today when `date` is before it (an installment already due is owed whole)' }),
  principal: MoneyString,
  interest: MoneyString,
  creditedInterest: MoneyString,
  total: MoneyString,
  waivedInterest: MoneyString,
  installments: Type.Array(Type.Object({
    ID: Uuid,
    number: Type.Integer(),
    dueDate: Day,
    principal: MoneyString,
    interest: MoneyString,
    creditedInterest: MoneyString,
    waivedInterest: MoneyString,
  }), { description: 'the installments owing anything or holding interest paid ahead, oldest first' }),
})

/** What paying a credit off on a day costs (the amount and default of a `zero` order with that value date). */
export const payoffRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const { queries, clock } = services

  app.get('/payables/:creditid/payoff', {
    config: { organization: 'header', permissions: ['ReadCredit'] },
    schema: {
      summary: 'What paying the credit off on a day costs: the principal, the interest accrued by then, and the interest of later periods forgiven',
      description: 'A `zero` order made today whose value date (`Date`) is on that day must pay `total` (its default); approved, it settles ' +
        'the credit (Pagado) and forgives `waivedInterest`. `total` is `principal` + `interest` − `creditedInterest`, the interest paid ahead of ' +
        'its accrual (an installment paid before its period ran), which the payoff credits to principal. A day before the last due date up to today is weighed on that due date ' +
        '(`weighedOn`): an installment already due is owed whole. A day after today is quoted as if nothing else were paid meanwhile. The ' +
        'credit must be Desembolsado (409 CREDIT_NOT_PAYABLE otherwise); `date` from its disbursement day on, default today (UTC).',
      tags: ['Payment orders'],
      headers: OrganizationHeaders,
      params: Type.Object({ creditid: Uuid }),
      querystring: Type.Object({ date: Type.Optional(Day) }, { additionalProperties: false }),
      response: { 200: Type.Object({ status: Type.Literal('success'), data: Type.Object({ payoff: Payoff }) }), ...failures(400, 401, 403, 404, 409) },
    },
  }, async (request) => {
    const { creditid: creditId } = request.params
    const credit = await queries.credits.get(organizationOf(request).id, creditId)
    if (credit === null) throw notFound('credit', creditId)
    if (credit.status !== 'Desembolsado' || credit.disbursedAt === null) {
      throw new AppError('CREDIT_NOT_PAYABLE', `only a Desembolsado credit has a payoff; this one is ${credit.status}`, { state: credit.status })
    }
    const disbursedDay = dayOf(credit.disbursedAt)
    const now = clock.now().toISOString()
    const asked = request.query.date ?? dayOf(now)
    if (asked < disbursedDay) throw invalidFields([{ field: 'querystring.date', message: `must not be before the credit's disbursement (${disbursedDay})` }])
    const { currency } = credit
    // Weighed as a zero order made now with that value date would be.
    const quote = payoffOf(credit, credit.disbursedAt, `${asked}T00:00:00.000Z`, now)
    const text = (amount: Parameters<typeof toMoneyText>[0]) => toMoneyText(amount, currency)
    return { status: 'success' as const, data: { payoff: {
      creditId, currency, date: asked, weighedOn: quote.day, principal: text(quote.principal), interest: text(quote.interest), creditedInterest: text(quote.credited), total: text(quote.total),
      waivedInterest: text(quote.waived),
      installments: quote.lines.map((line) => ({
        ID: line.installmentId, number: line.number, dueDate: line.dueDate, principal: text(line.principal), interest: text(line.interest), creditedInterest: text(line.credited),
        waivedInterest: text(line.waived),
      })),
    } } }
  })
}

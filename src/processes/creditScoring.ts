import { scoreReasons, scoringModelInForce } from '../commands/automaticScoring.js'
import { creditAggregate, scoringActor } from '../commands/credit.js'
import { organizationAggregate } from '../commands/organization.js'
import { profileAggregate } from '../commands/profile.js'
import { scoringConfigurationAggregate } from '../commands/scoringConfiguration.js'
import { evaluateScoringModel } from '../commands/scoringEvaluation.js'
import { scoringFieldsOfProfile } from '../commands/scoringFields.js'
import type { Services } from '../services.js'
import { money } from '../shared/money.js'
import { causedBy, defineProcess } from './process.js'

/**
 * Automatic scoring: a requested credit is scored with its organization's
 * default model when one is active and in force at the request. Everything
 * is read as it stood at the request (the streams up to the request's place in
 * the log, the age at the request's time), so a redelivery or a replay decides
 * the same; the credit records one score, and only while it is Solicitado.
 */
export const creditScoringProcess = defineProcess<Services, 'CreditRequested'>({
  name: 'creditScoring',
  handles: ['CreditRequested'],
  async handle(event, services) {
    const { commands } = services
    const { creditId, organizationId, debtorId, requestedAt } = event.data
    const asRequested = { before: event.position }
    const { state: organization } = await commands.load(organizationAggregate, organizationId, asRequested)
    if (organization.defaultConfigId === '') return
    const configuration = await commands.load(scoringConfigurationAggregate, organization.defaultConfigId, { ...asRequested, withEvents: true })
    const model = scoringModelInForce(configuration.events, requestedAt)
    if (model === null) return
    const { state: profile } = await commands.load(profileAggregate, debtorId, asRequested)
    const result = evaluateScoringModel(model.definition, scoringFieldsOfProfile(profile, new Date(requestedAt)))
    await commands.execute(creditAggregate, creditId, {
      type: 'RecordCreditScore', scoringModelId: model.modelId, version: model.version, versionNumber: model.versionNumber,
      score: money(result.score).toFixed(), decision: result.decision, reasons: scoreReasons(result), now: services.clock.now().toISOString(),
    }, causedBy(event, scoringActor(model.modelId)))
  },
})

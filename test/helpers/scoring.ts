import type { Test } from 'tap'
import { ManualClock } from '../../src/shared/clock.js'
import { createTestApp } from './app.js'
import { defaultConfigOf } from './organizations.js'

/** A hand-checked model (the one of docs/scoring.md): see the arithmetic in each test. */
export const consumerModel = {
  name: 'Consumer basic',
  description: 'Age, income and employment',
  version: '1.0',
  category: 'consumer',
  variables: [
    { field: 'age', weight: 0.3, type: 'numeric', ranges: [{ min: 18, max: 25, score: 50 }, { min: 26, max: 40, score: 80 }, { min: 41, max: 65, score: 100 }] },
    { field: 'monthlyIncome', weight: 0.5, type: 'numeric', ranges: [
      { min: 0, max: 1999999.99, score: 20 }, { min: 2000000, max: 4999999.99, score: 60 }, { min: 5000000, max: 1000000000, score: 100 },
    ] },
    { field: 'employmentType', weight: 0.2, type: 'categorical', categories: [{ value: 'formal', score: 100 }, { value: 'independent', score: 70 }, { value: 'informal', score: 40 }] },
  ],
  thresholds: { approve: 70, review: 50, reject: 30 },
  penalties: [{ condition: 'age < 21', penalty: 15, description: 'very young' }],
  bonuses: [{ condition: 'monthlyIncome >= 2000000 && employmentType == "formal"', bonus: 5, description: 'formal and solvent' }],
  isActive: true,
  isDefault: true,
  metadata: { owner: 'risk' },
}

type ScoringCall = { method: 'GET' | 'POST' | 'PUT' | 'PATCH'; url: string; payload?: object; headers?: Record<string, string> }

/** A service with its clock at 2026-01-15 12:00 and the scoring-model routes of its organization's default configuration. */
export const scoringModelApi = async (t: Test) => {
  const clock = new ManualClock('2026-01-15T12:00:00.000Z')
  const svc = await createTestApp(t, { clock })
  const configId = await defaultConfigOf(svc, svc.organizationId)
  const base = `/v1/organization/${svc.organizationId}/config/${configId}/scoring-model`
  const headers = { 'config-organization-id': svc.organizationId, 'organization-id': svc.organizationId }
  const as = (token: string, options: ScoringCall) => svc.call({ ...options, token, headers: { ...headers, ...options.headers } })
  const call = (options: ScoringCall) => as(svc.adminToken, options)
  return { svc, clock, configId, base, headers, call, as }
}

import type { MembershipEvent } from './membership.js'
import type { OAuthClientEvent } from './oauthClient.js'
import type { OrganizationEvent } from './organization.js'
import type { ProfileEvent } from './profile.js'
import type { RefreshTokenEvent } from './refreshToken.js'
import type { RoleTemplateEvent } from './roleTemplate.js'
import type { SystemEvent } from './system.js'
import type { Recorded } from './types.js'
import type { UserEvent, UsernameEvent } from './user.js'
import type { WebhookEvent } from './webhook.js'
import type { WebhookSendEvent } from './webhookSend.js'
import type { ExportBlobEvent, ExportEvent, LegacyExportUsageEvent } from './export.js'
import type { SignatureEvent } from './signature.js'
import type { NotificationEvent } from './notification.js'
import type { CreditLineEvent } from './creditLine.js'
import type { CreditEvent } from './credit.js'
import type { PaymentOrderEvent } from './paymentOrder.js'
import type { ScoringModelEvent } from './scoringModel.js'
import type { TaxApplied, TaxEvent } from './tax.js'
import type { CreditLimitEvent } from './creditLimit.js'

/** Every event of the service: one union per aggregate, joined here. */
export type DomainEvent =
  | OrganizationEvent
  | UserEvent
  | UsernameEvent
  | OAuthClientEvent
  | MembershipEvent
  | RoleTemplateEvent
  | RefreshTokenEvent
  | SystemEvent
  | ProfileEvent
  | WebhookEvent
  | WebhookSendEvent
  | ExportEvent
  | ExportBlobEvent
  | LegacyExportUsageEvent
  | SignatureEvent
  | NotificationEvent
  | CreditLineEvent
  | CreditEvent
  | PaymentOrderEvent
  | ScoringModelEvent
  | TaxEvent
  | TaxApplied
  | CreditLimitEvent

export type DomainEventType = DomainEvent['type']

export type RecordedEvent = Recorded<DomainEvent>

/** Narrows a recorded event to the types a handler declared. */
export type RecordedOf<T extends DomainEventType> = Recorded<Extract<DomainEvent, { type: T }>>

export const isEventOf = <T extends DomainEventType>(event: RecordedEvent, types: readonly T[]): event is RecordedOf<T> =>
  (types as readonly string[]).includes(event.type)

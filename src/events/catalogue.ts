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

/**
 * Every event type this version of the code knows (the compiler keeps it equal
 * to DomainEventType): a log holding another was written by a newer version,
 * and is refused when read rather than skipped or misread (serialization.ts).
 */
const knownTypes = {
  CreditApproved: true,
  CreditCancelled: true,
  CreditDisbursed: true,
  CreditLimitActivated: true,
  CreditLimitAmountChanged: true,
  CreditLimitCreated: true,
  CreditLimitDeactivated: true,
  CreditLimitExpirationChanged: true,
  CreditLimitExpired: true,
  CreditLimitExposureClosed: true,
  CreditLimitReleased: true,
  CreditLimitReserved: true,
  CreditLineCreated: true,
  CreditLineUpdated: true,
  CreditPaid: true,
  CreditPaymentApplied: true,
  CreditRejected: true,
  CreditRequested: true,
  CreditScored: true,
  DefaultScoringModelChanged: true,
  ExportBlobProduced: true,
  ExportCompleted: true,
  ExportExpired: true,
  ExportFailed: true,
  ExportFileDeleted: true,
  ExportInterrupted: true,
  ExportProgressed: true,
  ExportRequested: true,
  ExportStarted: true,
  LegacyExportRouteCalled: true,
  MembershipGranted: true,
  MembershipRoleChanged: true,
  NotificationDelivered: true,
  NotificationDispatched: true,
  NotificationFailed: true,
  OAuthClientRegistered: true,
  OAuthClientRevoked: true,
  OAuthClientSecretRotated: true,
  OrganizationActivated: true,
  OrganizationCreated: true,
  OrganizationDeactivated: true,
  OrganizationRenamed: true,
  PaymentOrderApproved: true,
  PaymentOrderCreated: true,
  PaymentOrderFailed: true,
  PaymentOrderSubmitted: true,
  ProfileActivated: true,
  ProfileCreated: true,
  ProfileDeactivated: true,
  ProfileFileAttached: true,
  ProfileShared: true,
  ProfileUnshared: true,
  ProfileUpdated: true,
  RefreshTokenFamilyRevoked: true,
  RefreshTokenIssued: true,
  RefreshTokenRotated: true,
  RoleTemplateAssigned: true,
  RoleTemplateCreated: true,
  RoleTemplateDeleted: true,
  RoleTemplateUnassigned: true,
  RoleTemplateUpdated: true,
  ScoringModelActivated: true,
  ScoringModelCreated: true,
  ScoringModelDeactivated: true,
  ScoringModelRevised: true,
  ServiceBootstrapped: true,
  SignatureFileDeleted: true,
  SignatureFileUploaded: true,
  SignatureFinalized: true,
  SignatureScanRequested: true,
  TaxActivated: true,
  TaxApplied: true,
  TaxCreated: true,
  TaxDeactivated: true,
  TaxUpdated: true,
  UserDeactivated: true,
  UserOtpAccepted: true,
  UserPasswordChanged: true,
  UserReactivated: true,
  UserRegistered: true,
  UserSignInFailed: true,
  UserSignInFailuresCleared: true,
  UserSignInLocked: true,
  UserSignInUnlocked: true,
  UserTotpEnrolled: true,
  UsernameClaimed: true,
  UsernameReleased: true,
  WebhookArchived: true,
  WebhookCreated: true,
  WebhookSendCompleted: true,
  WebhookSendOutcomeUnknown: true,
  WebhookSendStarted: true,
  WebhookUpdated: true,
} as const satisfies Record<DomainEventType, true>

export const isKnownEventType = (type: string): type is DomainEventType => Object.hasOwn(knownTypes, type)

/** The same list, for whoever must go over every type (the event-log recorder reports the ones a log leaves out). */
export const knownEventTypes: readonly DomainEventType[] = Object.keys(knownTypes).filter(isKnownEventType)

export type RecordedEvent = Recorded<DomainEvent>

/** Narrows a recorded event to the types a handler declared. */
export type RecordedOf<T extends DomainEventType> = Recorded<Extract<DomainEvent, { type: T }>>

export const isEventOf = <T extends DomainEventType>(event: RecordedEvent, types: readonly T[]): event is RecordedOf<T> =>
  (types as readonly string[]).includes(event.type)

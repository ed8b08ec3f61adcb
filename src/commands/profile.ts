import { isDeepStrictEqual } from 'node:util'
import {
  acceptsFileField, applyPersonChanges, type LegalPerson, type NaturalPerson, type PersonChanges, type ProfileEvent, type ProfileFileRef,
  type ProfileRequestKey, type ProfileType,
} from '../events/profile.js'
import { AppError, invalidFields, type FieldError } from '../shared/errors.js'
import { deterministicId } from '../shared/ids.js'
import { money } from '../shared/money.js'
import type { Aggregate } from './decider.js'
import type { CommandContext, CommandHandler } from './handler.js'
import { canonical, createOnceUnderKey, hashRequest } from './idempotency.js'

export type ProfileCommand =
  | {
    type: 'CreateProfile'
    profileId: string
    organizationId: string
    ownerId: string
    profileType: ProfileType
    natural: NaturalPerson | null
    legal: LegalPerson | null
    copiedFrom: { profileId: string; organizationId: string } | null
    /** Files a copy takes over from its source. */
    files?: ProfileFileRef[]
    /** The creator's `Idempotency-Key` (the profile id from `keyedProfileId`) and its request's hash (`profileRequestHash`). */
    idempotency?: ProfileRequestKey
    now: string
  }
  | { type: 'UpdateProfile'; natural?: PersonChanges<NaturalPerson>; legal?: PersonChanges<LegalPerson>; now: string }
  | { type: 'DeactivateProfile'; reason: string; now: string }
  | { type: 'ActivateProfile'; now: string }
  | { type: 'ShareProfile'; userId: string; sharedBy: string; now: string }
  | { type: 'UnshareProfile'; userId: string; now: string }
  | { type: 'AttachProfileFile'; field: string; fileId: string; contentType: string; size: number; sha256: string; filename: string; now: string }

export interface ProfileState {
  exists: boolean
  profileId: string
  organizationId: string
  ownerId: string
  profileType: ProfileType
  active: boolean
  natural: NaturalPerson | null
  legal: LegalPerson | null
  isCopy: boolean
  sharedWith: ReadonlySet<string>
  /** field (campo) → current file id */
  files: Readonly<Record<string, string>>
  /** field (campo) → what is recorded about its current file */
  fileRefs: Readonly<Record<string, ProfileFileRef>>
  /** The `Idempotency-Key` it was created with, and its request's hash; absent when it was created without one. */
  idempotency?: ProfileRequestKey
}

const requireProfile = (state: ProfileState): void => {
  if (!state.exists) throw new AppError('NOT_FOUND', 'profile not found', { resource: 'profile' })
}

const dateFields = { natural: ['birthDate', 'employmentStartDate'], legal: ['incorporationDate'] } as const

/** Birth, employment and incorporation dates cannot lie after the day of the command. */
const futureDates = (type: ProfileType, person: PersonChanges<NaturalPerson> | PersonChanges<LegalPerson> | undefined, now: string): FieldError[] => {
  if (person === undefined) return []
  const today = now.slice(0, 10)
  return dateFields[type].flatMap((field) => {
    const value: unknown = Reflect.get(person, field)
    return typeof value === 'string' && value > today ? [{ field: `body.${type}.${field}`, message: 'cannot be in the future' }] : []
  })
}

const refuseFutureDates = (type: ProfileType, person: PersonChanges<NaturalPerson> | PersonChanges<LegalPerson> | undefined, now: string): void => {
  const errors = futureDates(type, person, now)
  if (errors.length > 0) throw invalidFields(errors)
}

/** A value as JSON stores it (undefined properties dropped), to compare without regard to key order. */
const asJson = (value: unknown): unknown => (value === undefined ? undefined : JSON.parse(JSON.stringify(value)))

/**
 * Only the fields whose value differs from the current one (a nested object given with its keys in another order does not);
 * clearing a field that is not there changes nothing.
 */
const changedFields = <T extends object>(current: T | null, next: PersonChanges<T> | undefined): PersonChanges<T> => {
  if (next === undefined) return {}
  const changed: PersonChanges<T> = {}
  for (const key of Object.keys(next) as Array<keyof T>) {
    const value = next[key]
    const was = current?.[key]
    if (value === null ? was !== undefined : !isDeepStrictEqual(asJson(value), asJson(was))) changed[key] = value
  }
  return changed
}

export const profileAggregate: Aggregate<ProfileCommand, ProfileEvent, ProfileState> = {
  streamType: 'profile',
  eventTypes: ['ProfileCreated', 'ProfileUpdated', 'ProfileDeactivated', 'ProfileActivated', 'ProfileShared', 'ProfileUnshared', 'ProfileFileAttached'],
  initialState: () => ({
    exists: false, profileId: '', organizationId: '', ownerId: '', profileType: 'natural', active: false,
    natural: null, legal: null, isCopy: false, sharedWith: new Set(), files: {}, fileRefs: {},
  }),
  decide(command, state) {
    switch (command.type) {
      case 'CreateProfile': {
        if (state.exists) {
          // A creation with a Key that lost a race to the same Key: the caller compares it with the profile the first one made.
          if (command.idempotency !== undefined) return []
          throw new AppError('ALREADY_EXISTS', 'profile already exists')
        }
        const person = command.profileType === 'natural' ? command.natural : command.legal
        const other = command.profileType === 'natural' ? command.legal : command.natural
        if (person === null) throw invalidFields([{ field: `body.${command.profileType}`, message: `is required for a ${command.profileType} profile` }])
        if (other !== null) throw invalidFields([{ field: `body.${command.profileType === 'natural' ? 'legal' : 'natural'}`, message: `is not allowed on a ${command.profileType} profile` }])
        refuseFutureDates(command.profileType, person, command.now)
        const files = command.files ?? []
        const foreign = files.find((file) => !acceptsFileField(command.profileType, file.field))
        if (foreign !== undefined) throw invalidFields([{ field: 'files', message: `${foreign.field} is not a file of a ${command.profileType} profile` }])
        return [{ type: 'ProfileCreated', data: {
          profileId: command.profileId, organizationId: command.organizationId, ownerId: command.ownerId, type: command.profileType,
          natural: command.natural, legal: command.legal, isCopy: command.copiedFrom !== null, copiedFrom: command.copiedFrom, createdAt: command.now,
          ...(files.length > 0 ? { files } : {}), ...(command.idempotency === undefined ? {} : { idempotency: command.idempotency }),
        } }]
      }
      case 'UpdateProfile': {
        requireProfile(state)
        const wrong = state.profileType === 'natural' ? command.legal : command.natural
        if (wrong !== undefined) {
          throw invalidFields([{ field: `body.${state.profileType === 'natural' ? 'legal' : 'natural'}`, message: `cannot be set on a ${state.profileType} profile` }])
        }
        refuseFutureDates(state.profileType, state.profileType === 'natural' ? command.natural : command.legal, command.now)
        const natural = changedFields(state.natural, command.natural)
        const legal = changedFields(state.legal, command.legal)
        if (Object.keys(natural).length === 0 && Object.keys(legal).length === 0) return []
        return [{ type: 'ProfileUpdated', data: {
          profileId: state.profileId, organizationId: state.organizationId,
          ...(Object.keys(natural).length > 0 ? { natural } : {}), ...(Object.keys(legal).length > 0 ? { legal } : {}),
          updatedAt: command.now,
        } }]
      }
      case 'DeactivateProfile':
        requireProfile(state)
        return state.active ? [{ type: 'ProfileDeactivated', data: { profileId: state.profileId, organizationId: state.organizationId, reason: command.reason, at: command.now } }] : []
      case 'ActivateProfile':
        requireProfile(state)
        return state.active ? [] : [{ type: 'ProfileActivated', data: { profileId: state.profileId, organizationId: state.organizationId, at: command.now } }]
      case 'ShareProfile':
        requireProfile(state)
        if (command.userId === state.ownerId || state.sharedWith.has(command.userId)) return []
        return [{ type: 'ProfileShared', data: { profileId: state.profileId, organizationId: state.organizationId, userId: command.userId, sharedBy: command.sharedBy, at: command.now } }]
      case 'UnshareProfile':
        requireProfile(state)
        return state.sharedWith.has(command.userId)
          ? [{ type: 'ProfileUnshared', data: { profileId: state.profileId, organizationId: state.organizationId, userId: command.userId, at: command.now } }]
          : []
      case 'AttachProfileFile':
        requireProfile(state)
        if (!acceptsFileField(state.profileType, command.field)) {
          throw invalidFields([{ field: 'params.campo', message: `${command.field} is not a file of a ${state.profileType} profile` }])
        }
        if (state.files[command.field] === command.fileId) return []
        return [{ type: 'ProfileFileAttached', data: {
          profileId: state.profileId, organizationId: state.organizationId, field: command.field, fileId: command.fileId,
          contentType: command.contentType, size: command.size, sha256: command.sha256, filename: command.filename, attachedAt: command.now,
        } }]
      default: {
        const _never: never = command
        return _never
      }
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'ProfileCreated': {
        const files = event.data.files ?? []
        return { ...state, exists: true, active: true, profileId: event.data.profileId, organizationId: event.data.organizationId,
          ownerId: event.data.ownerId, profileType: event.data.type, natural: event.data.natural, legal: event.data.legal, isCopy: event.data.isCopy,
          files: Object.fromEntries(files.map((file) => [file.field, file.fileId])),
          fileRefs: Object.fromEntries(files.map((file) => [file.field, file])),
          ...(event.data.idempotency === undefined ? {} : { idempotency: event.data.idempotency }) }
      }
      case 'ProfileUpdated':
        return {
          ...state,
          natural: applyPersonChanges(state.natural, event.data.natural),
          legal: applyPersonChanges(state.legal, event.data.legal),
        }
      case 'ProfileDeactivated':
        return { ...state, active: false }
      case 'ProfileActivated':
        return { ...state, active: true }
      case 'ProfileShared':
        return { ...state, sharedWith: new Set([...state.sharedWith, event.data.userId]) }
      case 'ProfileUnshared': {
        const sharedWith = new Set(state.sharedWith)
        sharedWith.delete(event.data.userId)
        return { ...state, sharedWith }
      }
      case 'ProfileFileAttached': {
        const { profileId: _profile, organizationId: _organization, ...ref } = event.data
        return { ...state, files: { ...state.files, [event.data.field]: event.data.fileId }, fileRefs: { ...state.fileRefs, [event.data.field]: ref } }
      }
      default: {
        const _never: never = event
        return _never
      }
    }
  },
}

/** The id of the profile an organization's `Idempotency-Key` names: one profile per Key, whatever the concurrency. */
export const keyedProfileId = (organizationId: string, key: string): string => deterministicId('profile', organizationId, key)

/** Person fields that are amounts: compared as amounts ("4500000" and "4500000.00" are the same income). */
const amountFields: ReadonlySet<string> = new Set(['monthlyIncome'])

/**
 * What makes two creations with one Key "the same": the profile type and the
 * person, canonical (key order does not matter, amounts compare as amounts,
 * absent fields are absent). The caller is not part of it: whether it may have
 * the profile back is its visibility (see `createProfileOnce`).
 */
export const profileRequestHash = (profileType: ProfileType, person: NaturalPerson | LegalPerson): string => {
  const amounts = Object.fromEntries(Object.entries(person).flatMap(([field, value]: [string, unknown]) =>
    (amountFields.has(field) && typeof value === 'string' ? [[field, money(value).toFixed()]] : [])))
  return hashRequest([profileType, canonical({ ...person, ...amounts })])
}

/** What makes two copies with one Key "the same": the source profile (the target organization is the Key's). */
export const profileCopyRequestHash = (sourceProfileId: string): string => hashRequest(['copy', sourceProfileId])

/**
 * A profile creation under an `Idempotency-Key` (`command.idempotency`, its
 * profile id from `keyedProfileId`): the first creates the profile, the same
 * request again gets it back (`created: false`) whatever it has become, and
 * another request with the Key is refused. So is the same request from a
 * caller who may not see the profile (`mayView`, the visibility rule): the
 * Key is the organization's, but the profile is not answered to everyone in it.
 */
export const createProfileOnce = (
  commands: CommandHandler,
  command: Extract<ProfileCommand, { type: 'CreateProfile' }> & { idempotency: ProfileRequestKey },
  mayView: (state: ProfileState) => boolean,
  context: CommandContext,
  /** Checked only when the Key has created nothing yet (a copy's source must be active then, not at a retry). */
  mayCreate: () => void = () => {},
): Promise<{ created: boolean; position: number }> => createOnceUnderKey({
  requested: command.idempotency, what: 'profile creation request', details: { profileId: command.profileId },
  load: () => commands.load(profileAggregate, command.profileId), exists: (state) => state.exists, recordedKey: (state) => state.idempotency,
  mayView: { allows: mayView, refusal: 'this Idempotency-Key was already used by another caller, for a profile this caller does not see' },
  create: () => {
    mayCreate()
    return commands.execute(profileAggregate, command.profileId, command, context)
  },
})

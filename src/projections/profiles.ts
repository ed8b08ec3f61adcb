import { applyPersonChanges, fileIdKey, type LegalPerson, type NaturalPerson, type ProfileFileRef, type ProfileType } from '../events/profile.js'
import { applyAt, defineProjection, updateAt } from './projection.js'
import type { Filter, ReadStore } from './readStore.js'

/** A person object as read: its recorded fields plus `<Campo>FileID` for each current file (what webhook templates reference). */
export type WithFileIds<T> = T & { [key: `${string}FileID`]: string }

export interface ProfileDoc {
  _id: string
  _position?: number
  organizationId: string
  ownerId: string
  type: ProfileType
  active: boolean
  isCopy: boolean
  copiedFrom: { profileId: string; organizationId: string } | null
  natural: WithFileIds<NaturalPerson> | null
  legal: WithFileIds<LegalPerson> | null
  /** The person's city (natural.cityId or legal.cityId), for filtering and expansion. */
  cityId: string | null
  /** campo → its current file */
  files: Record<string, ProfileFileRef>
  sharedWith: string[]
  deactivationReason: string | null
  createdAt: string
  updatedAt: string
}

// The list's order (newest first, then by id) after the organization, alone and within one owner, and its totals by type the
// same two ways and by activity: MongoDB and SQLite read a page and its total from an index instead of sorting or counting
// every profile (a viewer's own active profiles by an index of all four: SQLite, without statistics, would take the
// organization's active ones). `sharedWith` holds arrays: SQLite finds its values through its element rows (sqliteTables.ts).
const collection = {
  name: 'profiles',
  indexes: [{ organizationId: 1, createdAt: -1, _id: -1 }, { ownerId: 1 }, { sharedWith: 1 }, { organizationId: 1, ownerId: 1, createdAt: -1, _id: -1 },
    { organizationId: 1, type: 1 }, { organizationId: 1, ownerId: 1, type: 1 }, { organizationId: 1, active: 1, type: 1 },
    { organizationId: 1, ownerId: 1, active: 1, type: 1 }],
} as const

const withFileIds = <T extends object>(person: T, files: Record<string, ProfileFileRef>): WithFileIds<T> => ({
  ...person,
  ...Object.fromEntries(Object.values(files).map((file) => [fileIdKey(file.field), file.fileId])),
})

const cityOf = (doc: Pick<ProfileDoc, 'natural' | 'legal'>): string | null => doc.natural?.cityId ?? doc.legal?.cityId ?? null

export const profilesProjection = defineProjection({
  name: 'profiles',
  handles: ['ProfileCreated', 'ProfileUpdated', 'ProfileDeactivated', 'ProfileActivated', 'ProfileShared', 'ProfileUnshared', 'ProfileFileAttached'],
  collections: [collection],
  async project(store, event, position) {
    const docs = store.collection<ProfileDoc>(collection)
    const at = event.metadata.occurredAt
    switch (event.type) {
      case 'ProfileCreated': {
        const { data } = event
        const files = Object.fromEntries((data.files ?? []).map((file) => [file.field, file]))
        const natural = data.natural === null ? null : withFileIds(data.natural, files)
        const legal = data.legal === null ? null : withFileIds(data.legal, files)
        return applyAt(docs, data.profileId, position, () => ({
          _id: data.profileId, organizationId: data.organizationId, ownerId: data.ownerId, type: data.type, active: true, isCopy: data.isCopy,
          copiedFrom: data.copiedFrom, natural, legal, cityId: cityOf({ natural, legal }), files, sharedWith: [], deactivationReason: null,
          createdAt: data.createdAt, updatedAt: data.createdAt,
        }))
      }
      case 'ProfileUpdated': {
        const { natural: naturalChanges, legal: legalChanges, updatedAt } = event.data
        return updateAt(docs, event.data.profileId, position, (doc) => {
          const natural = applyPersonChanges(doc.natural, naturalChanges)
          const legal = applyPersonChanges(doc.legal, legalChanges)
          return { ...doc, natural, legal, cityId: cityOf({ natural, legal }), updatedAt }
        })
      }
      case 'ProfileDeactivated':
        return updateAt(docs, event.data.profileId, position, (doc) => ({ ...doc, active: false, deactivationReason: event.data.reason, updatedAt: event.data.at }))
      case 'ProfileActivated':
        return updateAt(docs, event.data.profileId, position, (doc) => ({ ...doc, active: true, deactivationReason: null, updatedAt: event.data.at }))
      case 'ProfileShared':
        return updateAt(docs, event.data.profileId, position, (doc) => ({
          ...doc, sharedWith: doc.sharedWith.includes(event.data.userId) ? doc.sharedWith : [...doc.sharedWith, event.data.userId], updatedAt: at,
        }))
      case 'ProfileUnshared':
        return updateAt(docs, event.data.profileId, position, (doc) => ({ ...doc, sharedWith: doc.sharedWith.filter((id) => id !== event.data.userId), updatedAt: at }))
      case 'ProfileFileAttached': {
        const { profileId: _profile, organizationId: _organization, ...file } = event.data
        return updateAt(docs, event.data.profileId, position, (doc) => {
          const files = { ...doc.files, [file.field]: file }
          return {
            ...doc, files, updatedAt: file.attachedAt,
            natural: doc.natural === null ? null : withFileIds(doc.natural, files),
            legal: doc.legal === null ? null : withFileIds(doc.legal, files),
          }
        })
      }
      default: {
        const _never: never = event
        return _never
      }
    }
  },
})

/** Who may see a profile (its document, or the profile aggregate's state): its owner, the users it is shared with, and the organization's administrators. */
export const canViewProfile = (profile: { ownerId: string; sharedWith: Iterable<string> }, viewerId: string, administrator: boolean): boolean =>
  administrator || profile.ownerId === viewerId || Array.from(profile.sharedWith).includes(viewerId)

export interface ProfileListQuery {
  organizationId: string
  viewerId: string
  /** Administrators see every profile of the organization. */
  administrator: boolean
  /** Also the profiles shared with the viewer (besides their own). */
  includeShared: boolean
  type?: ProfileType
  active?: boolean
  offset: number
  limit: number
}

export interface ProfileList {
  items: ProfileDoc[]
  total: number
  naturalCount: number
  legalCount: number
  /** Profiles of the result shared with the viewer by someone else. */
  sharedCount: number
}

export const profileQueries = (store: ReadStore) => {
  const docs = store.collection<ProfileDoc>(collection)
  return {
    /** A profile of any organization: for routes whose organization comes from the profile itself. */
    byId: (id: string) => docs.get(id),
    /** A profile of this organization, or null (another organization's profile is not found). */
    get: async (organizationId: string, id: string) => {
      const doc = await docs.get(id)
      return doc !== null && doc.organizationId === organizationId ? doc : null
    },
    list: async (query: ProfileListQuery): Promise<ProfileList> => {
      const filter: Filter = { organizationId: query.organizationId }
      if (query.type !== undefined) filter['type'] = query.type
      if (query.active !== undefined) filter['active'] = query.active
      // The viewer's own profiles as an equality, which every store's indexes take (an `$or` is tested document by document).
      const ownOnly = !query.administrator && !query.includeShared
      if (ownOnly) filter['ownerId'] = query.viewerId
      else if (!query.administrator) filter['$or'] = [{ ownerId: query.viewerId }, { sharedWith: query.viewerId }]
      const [items, naturalCount, legalCount, sharedCount] = await Promise.all([
        docs.find(filter, { sort: { createdAt: -1, _id: -1 }, skip: query.offset, limit: query.limit }),
        query.type === 'legal' ? 0 : docs.count({ ...filter, type: 'natural' }),
        query.type === 'natural' ? 0 : docs.count({ ...filter, type: 'legal' }),
        // Of the viewer's own profiles, none is shared with the viewer by someone else.
        ownOnly ? 0 : docs.count({ ...filter, sharedWith: query.viewerId, ownerId: { $ne: query.viewerId } }),
      ])
      return { items, total: naturalCount + legalCount, naturalCount, legalCount, sharedCount }
    },
    /** Profiles of an organization, for exports: streamed in no particular order. */
    stream: (organizationId: string, filter: Filter = {}) => docs.stream({ ...filter, organizationId }),
    count: (organizationId: string, filter: Filter = {}) => docs.count({ ...filter, organizationId }),
  }
}

import { fileIdKey } from '../events/profile.js'
import type { OrganizationDoc } from '../projections/organizations.js'
import type { ProfileDoc } from '../projections/profiles.js'
import { cityCatalogue } from '../reference/cities.js'
import { ageOn } from '../shared/age.js'

export const expansions = ['entity', 'natural', 'legal', 'city'] as const
export type Expansion = (typeof expansions)[number]

const isExpansion = (value: string): value is Expansion => (expansions as readonly string[]).includes(value)

/** `expand=natural&expand=city` or `expand=natural,city`. */
export const parseExpand = (values: readonly string[] | undefined): ReadonlySet<Expansion> =>
  new Set((values ?? []).flatMap((value) => value.split(',')).filter(isExpansion))

export const profileFileUrl = (profileId: string, field: string, fileId: string): string => `/v1/debtor/${profileId}/profile/${field}/${fileId}`

/** The interface's profile fields, plus what `expand` asks for. */
export const profileView = (doc: ProfileDoc, expand: ReadonlySet<Expansion>, organization: OrganizationDoc | null, now: Date) => {
  const natural = doc.natural === null ? null : {
    ...doc.natural,
    ...(doc.natural.birthDate === undefined ? {} : { age: ageOn(doc.natural.birthDate, now) }),
  }
  return {
    ID: doc._id,
    type: doc.type,
    entityID: doc.organizationId,
    isCopy: doc.isCopy,
    copiedFromID: doc.copiedFrom?.profileId ?? null,
    active: doc.active,
    ownerID: doc.ownerId,
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
    ...(expand.has('entity') && organization !== null ? { entity: { ID: organization._id, name: organization.name, active: organization.active } } : {}),
    ...(expand.has('natural') ? { natural } : {}),
    ...(expand.has('legal') ? { legal: doc.legal } : {}),
    ...(expand.has('city') ? { city: doc.cityId === null ? null : cityCatalogue().get(doc.cityId) } : {}),
  }
}

/**
 * One profile read in full: every expansion, its current files and whom it
 * is shared with. Object.assign, not a spread followed by more keys: in Node
 * 20 that form makes a hidden class per call (docs/benchmarks.md, "Stop 25").
 */
export const fullProfileView = (doc: ProfileDoc, organization: OrganizationDoc | null, now: Date) =>
  Object.assign(profileView(doc, new Set(expansions), organization, now), {
    files: Object.values(doc.files)
      .sort((a, b) => a.field.localeCompare(b.field))
      .map((file) => ({ ...file, fileIdKey: fileIdKey(file.field), url: profileFileUrl(doc._id, file.field, file.fileId) })),
    sharedWith: doc.sharedWith,
    deactivationReason: doc.deactivationReason,
  })

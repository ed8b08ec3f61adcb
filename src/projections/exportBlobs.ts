import type { ExportFile } from '../events/export.js'
import { applyAt, defineProjection } from './projection.js'
import type { ReadStore } from './readStore.js'

/** The current pre-built file of an organization and kind (`logs`, `daily`, `monthly`). */
export interface ExportBlobDoc {
  _id: string
  _position?: number
  organizationId: string
  kind: string
  period: string
  file: ExportFile
  rowCount: number
  producedAt: string
}

const collection = { name: 'export_blobs', indexes: [{ organizationId: 1 }] } as const

const blobKey = (organizationId: string, kind: string) => `${organizationId}:${kind}`

export const exportBlobsProjection = defineProjection({
  name: 'exportBlobs',
  handles: ['ExportBlobProduced'],
  collections: [collection],
  async project(store, event, position) {
    const { organizationId, kind, period, file, rowCount, producedAt } = event.data
    const id = blobKey(organizationId, kind)
    await applyAt(store.collection<ExportBlobDoc>(collection), id, position, () => ({
      _id: id, organizationId, kind, period, file, rowCount, producedAt,
    }))
  },
})

export const exportBlobQueries = (store: ReadStore) => {
  const docs = store.collection<ExportBlobDoc>(collection)
  return {
    current: (organizationId: string, kind: string) => docs.get(blobKey(organizationId, kind)),
  }
}

import { exportAggregate } from '../commands/export.js'
import type { Services } from '../services.js'
import { defineProcess } from './process.js'
import { isoNow, systemContext } from './exportRunner.js'

/**
 * Deletes file content no longer served: an expired export's file (then
 * records ExportFileDeleted), a blob replaced by a newer one. Deleting twice
 * is harmless, so a redelivery after a crash is too.
 */
export const exportFileCleanupProcess = defineProcess<Services, 'ExportExpired' | 'ExportBlobProduced'>({
  name: 'exportFileCleanup',
  handles: ['ExportExpired', 'ExportBlobProduced'],
  async handle(event, services) {
    switch (event.type) {
      case 'ExportExpired':
        await services.files.delete(event.data.fileId)
        await services.execute(exportAggregate, event.data.orderId, { type: 'RecordExportFileDeleted', now: isoNow(services) },
          systemContext(event.data.organizationId, event.metadata.correlationId, event.id))
        return
      case 'ExportBlobProduced':
        if (event.data.replacesFileId !== null) await services.files.delete(event.data.replacesFileId)
        return
      default: {
        const _never: never = event
        return _never
      }
    }
  },
})

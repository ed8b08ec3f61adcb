/** Stream names: `<aggregate>-<uuid>`. */
export const streamTypes = [
  'organization', 'user', 'username', 'oauthClient', 'membership', 'roleTemplate', 'refreshTokenFamily', 'system',
  'profile', 'webhook',
  'webhookSend',
  'export', 'exportBlob', 'legacyExportUsage',
  'signature', 'notification',
  'creditLine', 'credit', 'order',
  'scoringConfiguration', 'tax', 'creditLimit',
] as const

export type StreamType = (typeof streamTypes)[number]

export const streamName = (type: StreamType, id: string): string => `${type}-${id}`

export const parseStreamName = (streamId: string): { type: string; id: string } => {
  const dash = streamId.indexOf('-')
  return dash < 0 ? { type: streamId, id: '' } : { type: streamId.slice(0, dash), id: streamId.slice(dash + 1) }
}

import type { StreamType } from '../../src/events/streams.js'
import { streamName } from '../../src/events/streams.js'
import type { TestApp } from './app.js'

/** The events of one aggregate's stream, type and data, in order. */
export const streamEvents = async (svc: TestApp, type: StreamType, id: string): Promise<Array<{ type: string; data: unknown }>> => {
  const events: Array<{ type: string; data: unknown }> = []
  for await (const event of svc.runtime.eventStore.readStream(streamName(type, id))) events.push({ type: event.type, data: event.data })
  return events
}

/** The types of the events of one aggregate's stream, in order. */
export const streamEventTypes = async (svc: TestApp, type: StreamType, id: string): Promise<string[]> =>
  (await streamEvents(svc, type, id)).map((event) => event.type)

import { once } from 'node:events'

/**
 * Writes text and waits while the stream's buffer is full: a log printed to a
 * slow reader (`| less`, a slow connection) would otherwise gather in the
 * process, all of it.
 */
export const writeInTurn = async (out: NodeJS.WritableStream, text: string): Promise<void> => {
  if (!out.write(text)) await once(out, 'drain')
}

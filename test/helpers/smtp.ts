import { SMTPServer } from 'smtp-server'

export interface ReceivedMail {
  from: string
  to: string[]
  raw: string
}

/** A real SMTP server on a loopback port that keeps what it receives; `rejectRecipients`: every RCPT TO answered 550, naming the address. */
export const smtpServer = async (
  t: { teardown(fn: () => unknown): void }, options: { rejectRecipients?: boolean } = {},
): Promise<{ port: number; received: ReceivedMail[] }> => {
  const received: ReceivedMail[] = []
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onRcptTo(address, _session, callback) {
      if (options.rejectRecipients !== true) return callback()
      return callback(Object.assign(new Error(`<${address.address}>: Recipient address rejected: mailbox unavailable`), { responseCode: 550 }))
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('end', () => {
        received.push({
          from: session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address,
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        })
        callback()
      })
    },
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const address = server.server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  return { port: address.port, received }
}

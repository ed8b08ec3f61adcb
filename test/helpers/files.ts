/** Small real files of the types uploads are checked against. */
export const pngBytes = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64')

export const pdfBytes = Buffer.from(
  '%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [] /Count 0 >> endobj\n' +
  'trailer << /Root 1 0 R >>\n%%EOF\n', 'latin1')

export const gifBytes = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64')

/** Bytes that are nothing file-type recognises, whatever the request claims. */
export const textBytes = Buffer.from('this is plain text pretending to be an image\n'.repeat(10))

/** A multipart/form-data body with one file part. */
export const multipartBody = (content: Buffer, filename: string, contentType: string) => {
  const boundary = `----credit-service-test-${Math.random().toString(16).slice(2)}`
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: ${contentType}\r\n\r\n`)
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`)
  return { payload: Buffer.concat([head, content, tail]), contentType: `multipart/form-data; boundary=${boundary}` }
}

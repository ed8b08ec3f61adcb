import type { TestApp } from './app.js'

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

/** `call(method, '/path', body)` under /v1 as the administrator, in an organization (Organization-ID header). */
export const organizationApi = (svc: TestApp, organizationId = svc.organizationId) => (method: Method, url: string, payload?: object) =>
  svc.call({ method, url: `/v1${url}`, token: svc.adminToken, organizationId, ...(payload === undefined ? {} : { payload }) })

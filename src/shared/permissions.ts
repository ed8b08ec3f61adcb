import { AppError } from './errors.js'

/**
 * The permission catalogue: every permission a role template may grant.
 * The interface names the first group; the service adds the rest. This is the
 * only list; role-template validation, the docs and route guards all read it.
 */
export const permissionCatalogue = {
  // Named by the interface.
  ReadCredit: 'Read credits, their schedules, events and webhook logs',
  WriteCredit: 'Request, approve, reject, disburse and cancel credits',
  ReadAnalysis: 'Read credit analyses and scoring results (a credit\'s automatic score)',
  WriteAnalysis: 'Record credit analyses and evaluate scoring models (with ReadScoringModel)',
  ReadDocument: 'Read documents and signature scans',
  WriteScoringModel: 'Create and update scoring models',
  ReadProfile: 'List and read profiles',
  ReadExport: 'Create data exports, read jobs and download their files',
  ExportReports: 'Create, estimate and list sources of `reports` exports',
  ReadReceivables: 'Export receivables, installments, ledgers and portfolio snapshots',
  ReadOrder: 'Read payment orders, export them and follow export progress',
  ReadChildEntity: 'Export debtor data sets',
  // Added by the service.
  WriteProfile: 'Create, update, share, copy, activate and deactivate profiles and upload their files',
  WriteDocument: 'Create signature scans, upload and finalize their files',
  DeleteSignatureImage: 'Delete `image` files of signature scans',
  DeleteSignatureDocumentFront: 'Delete `document-front` files of signature scans',
  DeleteSignatureDocumentBack: 'Delete `document-back` files of signature scans',
  DeleteSignatureVerification: 'Delete `verification` files of signature scans',
  ReadCreditLine: 'Read credit lines and the organization\'s products',
  WriteCreditLine: 'Create and update credit lines',
  WriteOrder: 'Create payment orders',
  ApproveOrder: 'Approve and reject payment orders',
  ReadWebhook: 'Read webhooks; their send logs with ReadCredit as well',
  WriteWebhook: 'Create, update, archive and test webhooks; re-send for a credit with ReadCredit as well',
  ReadScoringModel: 'Read scoring models',
  ReadTax: 'Read tax configurations',
  WriteTax: 'Create, update, activate and deactivate taxes',
  ReadCreditLimit: 'Read creditor credit limits',
  WriteCreditLimit: 'Create and update creditor credit limits',
  ReadRoleTemplate: 'List and read role templates',
  WriteRoleTemplate: 'Create, update and delete role templates',
  ManageMembers: 'Create users and OAuth clients in the organization',
  AdministerOrganization: 'Organization administrator: sees every profile and may delete any signature file',
} as const

export type Permission = keyof typeof permissionCatalogue

export const allPermissions = Object.keys(permissionCatalogue) as Permission[]

const permissionSet: ReadonlySet<string> = new Set(allPermissions)
export const isPermission = (name: string): name is Permission => permissionSet.has(name)

/**
 * Who grants permissions (creates, edits, deletes or assigns a role
 * template): `all` for an organization's administrator or the platform's,
 * else the permissions the caller holds in the organization.
 */
export type Grantor = 'all' | ReadonlySet<string>

/**
 * The one rule for granting permissions: a grantor may give (or take away)
 * only permissions it holds itself. Refuses with 403 FORBIDDEN naming the first
 * permission it lacks and all of them in `missing`. Names not in the catalogue
 * grant nothing, so they are not counted.
 */
export const requireGrantableBy = (grantor: Grantor, permissions: readonly string[]): void => {
  if (grantor === 'all') return
  const missing = [...new Set(permissions)].filter((p) => isPermission(p) && !grantor.has(p))
  const first = missing[0]
  if (first !== undefined) {
    throw new AppError('FORBIDDEN', `the caller lacks permissions of the role template: ${missing.join(' ')}`, { permission: first, missing })
  }
}

/** OAuth scopes exactly as the interface's table; `*` is the administrator. */
export const scopeCatalogue = {
  '*': 'full access (administrator)',
  'users:read': 'read users',
  'users:write': 'write users',
  'users.info:write': 'write user information',
  'clients:read': 'read OAuth clients',
  'clients:write': 'write OAuth clients',
  'verifications:write': 'write verifications',
  'passwords:write': 'write passwords',
  'keys:read': 'read keys',
  'settings:read': 'read settings',
  'settings:write': 'write settings',
} as const

export type Scope = keyof typeof scopeCatalogue
export const allScopes = Object.keys(scopeCatalogue) as Scope[]
const scopeSet: ReadonlySet<string> = new Set(allScopes)
export const isScope = (name: string): name is Scope => scopeSet.has(name)
export const ADMIN_SCOPE: Scope = '*'

/** Role templates every organization starts with (ids derived from the organization id). */
export const builtInRoleTemplates = [
  {
    key: 'administrator',
    name: 'Administrator',
    description: 'Every permission of the catalogue',
    permissions: allPermissions,
    isDefault: false,
  },
  {
    key: 'analyst',
    name: 'Analyst',
    description: 'Reads credits, profiles, documents and exports; writes nothing',
    permissions: ['ReadCredit', 'ReadAnalysis', 'ReadDocument', 'ReadProfile', 'ReadExport', 'ReadReceivables', 'ReadOrder',
      'ReadChildEntity', 'ReadCreditLine', 'ReadWebhook', 'ReadScoringModel', 'ReadTax', 'ReadCreditLimit', 'ReadRoleTemplate'] satisfies Permission[],
    isDefault: true,
  },
] as const

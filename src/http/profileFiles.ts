import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { profileAggregate } from '../commands/profile.js'
import { fileIdKey } from '../events/profile.js'
import { canViewProfile } from '../projections/profiles.js'
import type { Services } from '../services.js'
import { AppError, notFound } from '../shared/errors.js'
import { newId } from '../shared/ids.js'
import { commandContext, organizationOf, principalOf } from './context.js'
import { ProfileFile, ProfileFileField, ProfileSchema } from './profileSchemas.js'
import { fullProfileView, profileFileUrl } from './profileViews.js'
import { actInResourceOrganization } from './resourceAccess.js'
import { ConfigOrganizationHeaders, failures, Uuid } from './schemas.js'
import { acceptUploads, BinaryResponse, readUpload, sendFile, storeUpload, uploadDescription, uploadPolicy, UploadQuery } from './uploads.js'

/**
 * Profile files: uploads set `<Campo>FileID` on the profile; the bytes are served
 * to integrations (webhook receivers) by debtor, campo and file id.
 */
export const profileFileRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const { queries, clock, files } = services
  const policy = uploadPolicy(services.config)

  await app.register(async (scope) => {
    await acceptUploads(scope, policy)
    const uploads = scope.withTypeProvider<TypeBoxTypeProvider>()

    uploads.put('/profiles/:id/files/:campo', {
      config: { organization: 'config-header', permissions: ['WriteProfile'] },
      schema: {
        summary: 'Upload a profile file (campo); it becomes the profile\'s current file of that campo',
        description: `${uploadDescription(policy)} A new upload of a campo supersedes the previous file (whose bytes stay, but which is no longer served).`,
        tags: ['Profiles'], headers: ConfigOrganizationHeaders,
        params: Type.Object({ id: Uuid, campo: ProfileFileField }),
        querystring: UploadQuery,
        response: {
          201: Type.Object({ message: Type.String(), data: Type.Object({ file: ProfileFile, profile: ProfileSchema }) }),
          ...failures(400, 401, 403, 404, 413, 415),
        },
      },
    }, async (request, reply) => {
      const organization = organizationOf(request)
      const { id, campo } = request.params
      const doc = await queries.profiles.get(organization.id, id)
      if (doc === null || !canViewProfile(doc, principalOf(request).id, organization.isAdministrator)) throw notFound('profile', id)
      const upload = await readUpload(request, policy, request.query.filename)
      const fileId = newId()
      const stored = await storeUpload(files, fileId, upload, { organizationId: organization.id, defaultName: campo }, policy)
      try {
        await services.execute(profileAggregate, id, {
          type: 'AttachProfileFile', field: campo, fileId, contentType: stored.contentType, size: stored.size, sha256: stored.sha256,
          filename: stored.filename, now: clock.now().toISOString(),
        }, commandContext(request))
      } catch (error) {
        await files.delete(fileId)
        throw error
      }
      const updated = await queries.profiles.get(organization.id, id)
      const file = updated?.files[campo]
      if (updated === null || file === undefined) throw new AppError('INTERNAL', 'profile file not visible after the write')
      return reply.code(201).send({
        message: 'file stored',
        data: {
          file: { ...file, fileIdKey: fileIdKey(campo), url: profileFileUrl(id, campo, fileId) },
          profile: fullProfileView(updated, await queries.organizations.get(organization.id), clock.now()),
        },
      })
    })
  })

  app.get('/debtor/:debtorId/profile/:campo/:fileId', {
    schema: {
      summary: 'The bytes of a debtor\'s current profile file',
      description: 'Answers the file itself with its Content-Type and Content-Length (no JSON, no Base64). The organization is the debtor ' +
        'profile\'s; the caller (e.g. an OAuth client fetching a file id a webhook carried) must be a member of it with ReadProfile. ' +
        'Any mismatch of debtor, campo and file (including a superseded file or another organization\'s debtor) answers 404.',
      tags: ['Profiles'],
      params: Type.Object({ debtorId: Uuid, campo: Type.String({ maxLength: 100 }), fileId: Uuid }),
      headers: Type.Object({ 'organization-id': Type.Optional(Uuid) }, { additionalProperties: true }),
      response: { 200: BinaryResponse, ...failures(400, 401, 403, 404) },
    },
  }, async (request, reply) => {
    const { debtorId, campo, fileId } = request.params
    const missing = notFound('profile file')
    const doc = await queries.profiles.byId(debtorId)
    if (doc === null) throw missing
    await actInResourceOrganization(services, request, doc.organizationId, missing, ['ReadProfile'])
    const file = doc.files[campo]
    if (file === undefined || file.fileId !== fileId) throw missing
    const sent = await sendFile(reply, files, fileId, file)
    if (sent === null) throw missing
    return sent
  })
}

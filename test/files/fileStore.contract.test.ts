import t from 'tap'
import { FilesystemFileStore } from '../../src/files/filesystem.js'
import { GridFsFileStore } from '../../src/files/gridfs.js'
import { MongoReadStore } from '../../src/projections/mongoStore.js'
import { newId } from '../../src/shared/ids.js'
import { fileStoreContract } from '../contracts/fileStore.js'
import { tempDir } from '../helpers/config.js'

t.test('filesystem file store', async (t) => {
  fileStoreContract(t, async () => new FilesystemFileStore(tempDir()))
})

const mongoUrl = process.env['MONGODB_URL']
t.test('GridFS file store', { skip: mongoUrl === undefined ? 'MONGODB_URL is not set: no MongoDB server to run the contract against' : false }, async (t) => {
  const stores: MongoReadStore[] = []
  t.teardown(async () => { for (const s of stores) await s.close() })
  fileStoreContract(t, async () => {
    const store = await MongoReadStore.connect(mongoUrl ?? '', `credit_files_${newId().slice(-8)}`)
    stores.push(store)
    return new GridFsFileStore(store.database)
  })
})

import t from 'tap'
import { deterministicId, deterministicIdAfter, isUuid, newId } from '../../src/shared/ids.js'

t.test('new ids are UUIDv7 and sort in the order they were made', async (t) => {
  const ids = Array.from({ length: 2000 }, () => newId())
  t.ok(ids.every((id) => isUuid(id) && id[14] === '7'), 'every id is a valid version-7 UUID')
  t.same([...ids].sort(), ids, 'lexical order is creation order')
  t.equal(new Set(ids).size, ids.length, 'no id repeats')
})

t.test('an id derived after a UUIDv7 keeps its time prefix and is stable', async (t) => {
  const trigger = newId()
  const a = deterministicIdAfter(trigger, trigger, 'webhook-a')
  t.equal(a, deterministicIdAfter(trigger, trigger, 'webhook-a'), 'the same inputs give the same id')
  t.not(a, deterministicIdAfter(trigger, trigger, 'webhook-b'), 'other parts give another id')
  t.ok(isUuid(a), 'it is a valid UUID')
  t.equal(a.slice(0, 13), trigger.slice(0, 13), 'the first 48 bits are the source id\'s milliseconds')
  t.equal(a[14], '8', 'version 8 (custom layout)')
  t.match(a[19], /[89ab]/, 'RFC 9562 variant')
  t.equal(a.slice(15), deterministicId(trigger, 'webhook-a').slice(15), 'the rest is the name-derived id\'s')
  const first = '01a20000-0000-7000-8000-000000000000'
  const second = '01a20000-0001-7000-8000-000000000000'
  t.ok(deterministicIdAfter(second, second, 'z') > deterministicIdAfter(first, first, 'a'), 'an id derived from a later millisecond sorts later, whatever its name')
})

t.test('an id derived from an id that is not UUIDv7 is the name-derived id, unchanged from before', async (t) => {
  const older = '3b241101-e2bb-4255-8caf-4136c566a962'
  t.equal(deterministicIdAfter(older, older, 'w'), deterministicId(older, 'w'))
})

t.test('name-derived ids are the ones every earlier version derived', async (t) => {
  t.equal(deterministicId('bootstrap', 'organization'), '027b3cdf-7213-5a6c-90d6-650ff79a3537')
})

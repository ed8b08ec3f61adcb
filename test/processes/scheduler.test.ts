import t from 'tap'
import { Scheduler } from '../../src/processes/scheduler.js'

const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined }

t.test('jobs run at UTC times whatever the host\'s zone', async (t) => {
  const zone = process.env['TZ']
  t.teardown(() => {
    if (zone === undefined) delete process.env['TZ']
    else process.env['TZ'] = zone
  })
  for (const hostZone of ['Asia/Tokyo', 'America/Santiago', 'Europe/Madrid']) {
    process.env['TZ'] = hostZone
    const scheduler = new Scheduler([
      { name: 'daily', schedule: '5 0 * * *', run: async () => undefined },
      { name: 'monthly', schedule: '25 0 1 * *', run: async () => undefined },
    ], {}, silent)
    scheduler.start()
    const daily = scheduler.nextRun('daily')
    const monthly = scheduler.nextRun('monthly')
    await scheduler.stop()
    t.equal(daily?.toISOString().slice(11), '00:05:00.000Z', `daily on a ${hostZone} host`)
    t.equal(monthly?.toISOString().slice(8), '01T00:25:00.000Z', `monthly on a ${hostZone} host`)
    t.ok(daily !== null && daily.getTime() - Date.now() <= 86_400_000, 'within a day')
  }
  t.equal(new Scheduler([], {}, silent).nextRun('daily'), null, 'nothing before a start')
})

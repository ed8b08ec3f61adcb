import { Observable } from 'rxjs'
import type { EventSubscription } from './store.js'
import type { RecordedEvent } from './catalogue.js'

export const subscriptionToObservable = (open: () => EventSubscription): Observable<RecordedEvent> =>
  new Observable<RecordedEvent>((subscriber) => {
    const subscription = open()
    let closed = false
    void (async () => {
      try {
        for await (const event of subscription) {
          if (closed) break
          subscriber.next(event)
        }
        if (!closed) subscriber.complete()
      } catch (error) {
        if (!closed) subscriber.error(error)
      }
    })()
    return () => {
      closed = true
      void subscription.close()
    }
  })

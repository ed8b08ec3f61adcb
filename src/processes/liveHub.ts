import { Subject, filter, type Observable } from 'rxjs'
import type { RecordedEvent } from '../events/catalogue.js'

/**
 * The live event hub: every event, once projected, is published here. SSE
 * streams and in-process listeners subscribe; the hub never buffers, so a
 * subscriber that cannot keep up must drop itself.
 */
export class LiveHub {
  private readonly subject = new Subject<RecordedEvent>()
  readonly events$: Observable<RecordedEvent> = this.subject.asObservable()

  publish(event: RecordedEvent): void {
    this.subject.next(event)
  }

  ofOrganization(organizationId: string): Observable<RecordedEvent> {
    return this.events$.pipe(filter((event) => event.metadata.organizationId === organizationId))
  }

  close(): void {
    this.subject.complete()
  }
}

import type { DomainEvent } from '../events/catalogue.js'

/**
 * A pure decider: the whole behaviour of one aggregate. `decide` answers the
 * events a command causes (or throws an AppError to refuse it), `evolve` folds
 * one event into the state. No I/O, no clock, no random ids: they come in the
 * command.
 */
export interface Decider<Command, Event extends DomainEvent, State> {
  decide(command: Command, state: State): Event[]
  evolve(state: State, event: Event): State
  initialState(): State
}

/** A decider with the name of its stream type: streams are `<streamType>-<id>`. */
export interface Aggregate<Command, Event extends DomainEvent, State> extends Decider<Command, Event, State> {
  streamType: string
  /** The event types of this aggregate, so a fold can skip anything else defensively. */
  eventTypes: ReadonlyArray<Event['type']>
}

export const fold = <E extends DomainEvent, S>(decider: Pick<Decider<unknown, E, S>, 'evolve' | 'initialState'>, events: Iterable<E>): S => {
  let state = decider.initialState()
  for (const event of events) state = decider.evolve(state, event)
  return state
}

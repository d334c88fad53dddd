/**
 * given(events).when(decide).then(events | error): a decision tested on the state folded from past events.
 */
export function givenEvents<S, E>(fold: { initialState: S; evolve(s: S, e: E): S }, history: readonly E[]) {
  const state = history.reduce(fold.evolve, fold.initialState);
  return {
    state,
    when(decide: (state: S) => readonly E[]) {
      let result: readonly E[] | undefined;
      let error: unknown;
      try {
        result = decide(state);
      } catch (e) {
        error = e;
      }
      return {
        then(expected: readonly E[]) {
          if (error) throw error;
          expect(result).toEqual(expected);
        },
        thenFails(match: Record<string, unknown>) {
          expect(error).toMatchObject(match);
        },
      };
    },
  };
}

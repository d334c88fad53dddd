import { ThreadChoice } from './lexical-thread-choice';

/** Ranks `queries` queries of `postings` postings, each way costing what `cost` says; how many went to two threads. */
function run(choice: ThreadChoice, queries: number, postings: number, cost: { one: number; two: number }): number {
  let two = 0;
  for (let q = 0; q < queries; q++) {
    const threaded = choice.twoThreads(postings);
    if (threaded) two++;
    choice.took(postings, threaded, (threaded ? cost.two : cost.one) * (postings / 1e6));
  }
  return two;
}

describe('ThreadChoice: a large query goes to two threads only while that is measured cheaper', () => {
  it('never uses two threads for a query under the threshold', () => {
    const choice = new ThreadChoice(150_000);
    expect(run(choice, 200, 149_999, { one: 10, two: 1 })).toBe(0);
  });

  it('takes two threads while the second core is free, one when it is busy, and follows a change of load', () => {
    const choice = new ThreadChoice(150_000);
    expect(run(choice, 160, 1_000_000, { one: 6, two: 3.6 })).toBeGreaterThan(140); // a free core
    expect(run(choice, 160, 1_000_000, { one: 6, two: 6.6 })).toBeLessThan(30); // another process on it
    run(choice, 50, 1_000_000, { one: 6, two: 3.6 }); // the core freed again: seen within a few explorations
    expect(run(choice, 100, 1_000_000, { one: 6, two: 3.6 })).toBeGreaterThan(90);
  });
});

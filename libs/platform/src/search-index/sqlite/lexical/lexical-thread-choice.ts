/** One query in this many ranks the way that is measured slower, so that a change of the machine's load is seen. */
const EXPLORE_EVERY = 16;
/** Weight of a new measure in the running cost of the way taken; of the way explored (rarer measures), more. */
const ALPHA = 0.1;
const ALPHA_EXPLORED = 0.4;
/**
 * Two threads are taken only when measured this much cheaper: their cost per posting is noisy on a loaded machine
 * (a query's halves wait on the scheduler), and a near tie is not worth the thread (in-index p50 the same as the
 * base's at load ~3 while the two ways were within 10% and the choice went back and forth).
 */
const MARGIN = 0.9;

/**
 * Whether a large query is ranked on two threads or one (docs/search.md, "Ranking on two threads"). Two threads
 * win only when the second core is free: at 1M rows each half of the parts' top 300 takes 55–60% of the whole
 * when run alone, but while another process kept the other core busy the split took 105–120% of the one-thread
 * time (each half ran at ~60% speed). So both ways' cost per posting is kept as a running average, two threads
 * are taken while at least {@link MARGIN} times one thread's, and one query in {@link EXPLORE_EVERY} takes the
 * other way to keep its cost current. Below `minPostings` a query is always ranked on one thread: modelled on a
 * free core the gain there is ≤ 0.5 ms, and beside a busy one the wait for the thread cost ~2 ms.
 */
export class ThreadChoice {
  /** Running ms per million postings: [one thread, two threads]; NaN until measured. */
  private readonly cost = [NaN, NaN];
  private asked = 0;
  private explored = false;

  constructor(readonly minPostings: number) {}

  /** Whether to rank a query of `postings` postings on two threads. */
  twoThreads(postings: number): boolean {
    if (postings < this.minPostings) return false;
    const [one, two] = this.cost;
    if (Number.isNaN(one)) return false;
    if (Number.isNaN(two)) return true;
    this.explored = this.asked++ % EXPLORE_EVERY === 0;
    return this.explored !== two < MARGIN * one;
  }

  /** How long a query of `postings` postings took to rank, on two threads or one. */
  took(postings: number, twoThreads: boolean, ms: number): void {
    if (postings < this.minPostings || postings === 0) return;
    const i = twoThreads ? 1 : 0;
    const c = (ms * 1e6) / postings;
    this.cost[i] = Number.isNaN(this.cost[i]) ? c : this.cost[i] + (this.explored ? ALPHA_EXPLORED : ALPHA) * (c - this.cost[i]);
  }
}

import { feedPosition, LiveItem, LiveTurns } from './live-turns';
import { TurnSink } from './turn-sink';

/** A caller's sink that writes down each callback with the id it was given. */
function recorder() {
  const got: string[] = [];
  const sink: TurnSink = {
    event: (v, id) => got.push(`${id} event ${String(v.type)}`),
    delta: (t, id) => got.push(`${id} delta ${t}`),
    deltaEnd: (e, id) => got.push(`${id} end ${e}`),
    contextConsumed: (_u, id) => got.push(`${id} usage`),
    compactionStarted: (_v, id) => got.push(`${id} compaction`),
  };
  return { got, sink };
}

const take = async (items: AsyncGenerator<LiveItem>, n: number) => {
  const out: string[] = [];
  for await (const i of items) {
    out.push(i.id);
    if (out.length === n) break;
  }
  return out;
};

describe('a live turn', () => {
  it('gives its caller every item with its place in the stream: events their revision, the rest numbered after the last known revision', () => {
    const live = new LiveTurns().open('session-a.s', 'turn_1', 0);
    const { got, sink } = recorder();
    const out = live.tee(sink);
    out.event({ type: 'input_message' }, '1');
    out.reached?.(2); // the turn's start, shown to nobody
    out.delta('Hel');
    out.delta('lo');
    out.contextConsumed({ input_tokens: 1, output_tokens: 1 });
    out.event({ type: 'agent_output' }, '3');
    out.reached?.(4);
    out.deltaEnd('aev_out');
    out.deltaEnd(undefined);
    expect(got).toEqual(['1 event input_message', '2.1 delta Hel', '2.2 delta lo', '2.3 usage', '3 event agent_output', '4.1 end aev_out', 'undefined end undefined']);
  });

  it('replays what came after a position, then goes on live until the turn ends', async () => {
    const turns = new LiveTurns();
    const live = turns.open('session-a.s', 'turn_1', 0);
    const out = live.tee(recorder().sink);
    out.event({ type: 'input_message' }, '1');
    out.reached?.(2);
    out.delta('a');
    out.delta('b');
    const items = live.after(feedPosition('2.1')!);
    expect(await take(items, 1)).toEqual(['2.2']);
    const rest = take(live.after(feedPosition('2.2')!), 10);
    out.delta('c');
    out.event({ type: 'agent_output' }, '3');
    turns.close(live);
    expect(await rest).toEqual(['2.3', '3']);
    expect(turns.of('session-a.s')).toBeUndefined();
    // From before the turn: everything it streamed.
    expect(await take(live.after({ revision: 0, n: 0 }), 10)).toEqual(['1', '2.1', '2.2', '2.3', '3']);
  });

  it('a newer turn of the session is not dropped by the close of the one before', () => {
    const turns = new LiveTurns();
    const first = turns.open('session-a.s', 'turn_1', 0);
    const second = turns.open('session-a.s', 'turn_2', 5);
    turns.close(first);
    expect(turns.of('session-a.s')).toBe(second);
  });

  it('reads Last-Event-ID as a revision or a revision and a number, nothing else', () => {
    expect(feedPosition('12')).toEqual({ revision: 12, n: 0 });
    expect(feedPosition('12.3')).toEqual({ revision: 12, n: 3 });
    for (const bad of ['', 'aev_1', '1.', '.1', '-1', '1.2.3', '1e3']) expect(feedPosition(bad)).toBeUndefined();
  });
});

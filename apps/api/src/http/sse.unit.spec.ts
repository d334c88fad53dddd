import { EventEmitter } from 'node:events';
import type { Response } from 'express';
import { SseStream } from './sse';

/** A response whose socket buffer is full from the first write until `drain()`. */
function slowResponse() {
  const res = Object.assign(new EventEmitter(), {
    written: [] as string[],
    destroyed: false,
    writableNeedDrain: false,
    status: () => res,
    set: () => res,
    flushHeaders: () => undefined,
    write(text: string) {
      res.written.push(text);
      res.writableNeedDrain = true;
      return false;
    },
    end: () => undefined,
    destroy() {
      res.destroyed = true;
      res.emit('close');
    },
    drain() {
      res.writableNeedDrain = false;
      res.emit('drain');
    },
  });
  return res;
}

const settled = async (p: Promise<unknown>) => {
  let done = false;
  void p.then(() => (done = true));
  await new Promise((r) => setTimeout(r, 20));
  return done;
};

describe('SseStream.paced', () => {
  it('waits while the client has not drained what was written, and goes on when it has', async () => {
    const res = slowResponse();
    const stream = SseStream.open(res as unknown as Response);
    const first = stream.paced({ event: 'a', data: '1' });
    expect(await settled(first)).toBe(false);
    res.drain();
    expect(await settled(first)).toBe(true);
    expect(res.written).toEqual(['event:a\ndata:1\n\n']);
    stream.end();
  });

  it('disconnects a client that drains nothing for the stall time, and stops waiting when the client goes', async () => {
    const res = slowResponse();
    const stream = SseStream.open(res as unknown as Response, 50);
    const stalled = stream.paced({ data: 'x' });
    expect(await settled(stalled)).toBe(false);
    await new Promise((r) => setTimeout(r, 60));
    expect(await settled(stalled)).toBe(true);
    expect(res.destroyed).toBe(true);
    expect(stream.closed).toBe(true);

    const other = slowResponse();
    const gone = SseStream.open(other as unknown as Response).paced({ data: 'y' });
    other.destroy();
    expect(await settled(gone)).toBe(true);
  });
});

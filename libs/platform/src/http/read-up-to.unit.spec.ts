import { readUpTo } from './read-up-to';

describe('readUpTo', () => {
  it('stops a body that never ends at the limit and cancels the rest', async () => {
    let cancelled = false;
    const endless = new ReadableStream<Uint8Array>({
      pull: (c) => c.enqueue(new Uint8Array(64 * 1024).fill(97)),
      cancel: () => void (cancelled = true),
    });
    const { bytes, truncated } = await readUpTo(new Response(endless), 100_000);
    expect([bytes.length, truncated, cancelled]).toEqual([100_000, true, true]);
  });

  it('returns a short body whole', async () => {
    expect(await readUpTo(new Response('hello'), 10)).toEqual({ bytes: Buffer.from('hello'), truncated: false });
  });
});

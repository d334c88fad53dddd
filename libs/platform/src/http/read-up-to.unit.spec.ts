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

describe('readUpTo on a Node readable (undici request bodies)', () => {
  it('stops an endless body at the limit and destroys it', async () => {
    const { Readable } = await import('node:stream');
    const endless = new Readable({ read() { this.push(Buffer.alloc(64 * 1024, 97)); } });
    const { bytes, truncated } = await readUpTo(endless, 100_000);
    expect([bytes.length, truncated, endless.destroyed]).toEqual([100_000, true, true]);
  });

  it('returns a short body whole', async () => {
    const { Readable } = await import('node:stream');
    expect(await readUpTo(Readable.from([Buffer.from('hel'), Buffer.from('lo')]), 10)).toEqual({ bytes: Buffer.from('hello'), truncated: false });
  });
});

import type { Readable } from 'node:stream';

/**
 * Reads at most `limit` bytes of a response body and cancels the rest, so a peer that sends without end (or a
 * page of gigabytes) costs at most `limit` bytes of memory. `truncated` says whether more was on offer. Takes a
 * fetch `Response` or a Node readable (undici's `request` body), which is destroyed when cut.
 */
export async function readUpTo(res: Response | Readable, limit: number): Promise<{ bytes: Buffer; truncated: boolean }> {
  const parts: Buffer[] = [];
  let size = 0;
  const take = (value: Uint8Array): boolean => {
    parts.push(Buffer.from(value));
    size += value.length;
    return size > limit;
  };
  if (isReadable(res)) {
    for await (const value of res) {
      if (take(value as Uint8Array)) {
        res.destroy();
        return { bytes: Buffer.concat(parts).subarray(0, limit), truncated: true };
      }
    }
    return { bytes: Buffer.concat(parts), truncated: false };
  }
  if (!res.body) return { bytes: Buffer.alloc(0), truncated: false };
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { bytes: Buffer.concat(parts), truncated: false };
    if (take(value)) {
      await reader.cancel().catch(() => undefined);
      return { bytes: Buffer.concat(parts).subarray(0, limit), truncated: true };
    }
  }
}

const isReadable = (res: Response | Readable): res is Readable => typeof (res as Readable).pipe === 'function';

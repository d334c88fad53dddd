/**
 * Reads at most `limit` bytes of a response body and cancels the rest, so a peer that sends without end (or a
 * page of gigabytes) costs at most `limit` bytes of memory. `truncated` says whether more was on offer.
 */
export async function readUpTo(res: Response, limit: number): Promise<{ bytes: Buffer; truncated: boolean }> {
  if (!res.body) return { bytes: Buffer.alloc(0), truncated: false };
  const reader = res.body.getReader();
  const parts: Buffer[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { bytes: Buffer.concat(parts), truncated: false };
    parts.push(Buffer.from(value));
    size += value.length;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      return { bytes: Buffer.concat(parts).subarray(0, limit), truncated: true };
    }
  }
}

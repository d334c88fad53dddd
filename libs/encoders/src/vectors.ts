/** Scales a vector to unit length in place; a zero vector stays zero (it matches nothing rather than NaN). */
export function normalize(v: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += v[i] * v[i];
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < v.length; i++) v[i] /= norm;
  return v;
}

export function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

/** Runs `work` over consecutive slices of at most `size` items, one slice at a time, and concatenates the results. */
export async function inBatches<T, R>(items: readonly T[], size: number, work: (batch: readonly T[]) => Promise<R[]>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += size) out.push(...(await work(items.slice(i, i + size))));
  return out;
}

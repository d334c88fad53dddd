/** How section text is split into parts (chunks). */
export type ChunkingStrategy = { type: 'sentence_chunking_strategy' } | { type: 'max_chars_chunking_strategy'; maxCharsPerChunk: number };

const segmenter = new Intl.Segmenter('en', { granularity: 'sentence' });

/** Sentences by the Unicode sentence-break rules (ICU, built into Node), trimmed, empty ones dropped. */
export function sentences(text: string): string[] {
  const out: string[] = [];
  for (const s of segmenter.segment(text)) {
    const t = s.segment.trim();
    if (t) out.push(t);
  }
  return out;
}

/**
 * Splits text into chunks. Sentence strategy: one chunk per sentence. Max-chars: sentences are added to a
 * chunk while it stays within the limit; a sentence longer than the limit is split across chunks.
 */
export function chunkText(text: string, strategy: ChunkingStrategy): string[] {
  const ss = sentences(text);
  if (strategy.type === 'sentence_chunking_strategy') return ss;
  const max = strategy.maxCharsPerChunk;
  const chunks: string[] = [];
  let current = '';
  for (const s of ss) {
    if (s.length > max) {
      if (current) chunks.push(current);
      current = '';
      for (let i = 0; i < s.length; i += max) chunks.push(s.slice(i, i + max));
      continue;
    }
    const joined = current ? `${current} ${s}` : s;
    if (joined.length > max) {
      chunks.push(current);
      current = s;
    } else current = joined;
  }
  if (current) chunks.push(current);
  return chunks;
}

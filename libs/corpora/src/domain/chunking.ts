/** How section text is split into parts (chunks). */
export type ChunkingStrategy = { type: 'sentence_chunking_strategy' } | { type: 'max_chars_chunking_strategy'; maxCharsPerChunk: number };

const segmenter = new Intl.Segmenter('en', { granularity: 'sentence' });

/**
 * Characters handed to the segmenter at once. V8's sentence segmenter costs grow with the square of the text it
 * walks (17k sentences in one string: 19 s), so a line is read in windows of this size: linear in the text.
 */
const WINDOW_CHARS = 4096;
/**
 * Breaks closer than this to a window's end are not trusted: the sentence rules look ahead (a full stop then
 * spaces, quotes and a lower-case word is no break), so the tail is read again at the start of the next window.
 */
const WINDOW_MARGIN_CHARS = 512;
/**
 * The longest text read as one sentence. Past it, a run with no sentence break is cut at its last space before this
 * length (or here, when it has none) and read on from there: the window doubling kept ICU's work linear, but a
 * single 10 MB run was one step of ~1.4 s that nothing could interrupt.
 */
export const MAX_SENTENCE_CHARS = 65_536;

/**
 * Line separators. The sentence rules always break after one (UAX #29 SB4), so splitting there first changes no
 * sentence; CR LF stays one separator as the rules keep it.
 */
const LINE_BREAK = /\r\n|[\n\r\u0085\u2028\u2029]/;

/** Sentences by the Unicode sentence-break rules (ICU, built into Node), trimmed, empty ones dropped. */
export const sentences = (text: string): string[] => [...eachSentence(text)];

/** As `sentences`, lazily, in text order. */
export function* eachSentence(text: string): Generator<string> {
  for (const line of text.split(LINE_BREAK)) yield* lineSentences(line);
}

function* lineSentences(line: string): Generator<string> {
  let start = 0;
  let window = WINDOW_CHARS;
  while (start < line.length) {
    const end = start + window;
    if (end >= line.length) {
      for (const s of segmenter.segment(line.slice(start))) yield* trimmed(s.segment);
      return;
    }
    let kept = 0;
    const found: string[] = [];
    for (const s of segmenter.segment(line.slice(start, end))) {
      if (s.index + s.segment.length > window - WINDOW_MARGIN_CHARS) break;
      found.push(s.segment);
      kept = s.index + s.segment.length;
    }
    if (kept === 0) {
      if (window >= MAX_SENTENCE_CHARS) {
        const space = line.lastIndexOf(' ', start + MAX_SENTENCE_CHARS);
        const cut = space > start ? space + 1 : start + MAX_SENTENCE_CHARS;
        yield* trimmed(line.slice(start, cut));
        start = cut;
        window = WINDOW_CHARS;
        continue;
      }
      // One sentence longer than the window: read it again in a window twice as large (geometric, so linear overall).
      window *= 2;
      continue;
    }
    for (const segment of found) yield* trimmed(segment);
    start += kept;
    window = WINDOW_CHARS;
  }
}

function* trimmed(segment: string): Generator<string> {
  const t = segment.trim();
  if (t) yield t;
}

/**
 * Splits text into chunks. Sentence strategy: one chunk per sentence. Max-chars: sentences are added to a chunk
 * while it stays within the limit; a sentence longer than the limit is split across chunks.
 */
export const chunkText = (text: string, strategy: ChunkingStrategy): string[] => [...eachChunk(text, strategy)];

/** As `chunkText`, lazily: a caller that bounds the number of parts stops reading the text there. */
export function* eachChunk(text: string, strategy: ChunkingStrategy): Generator<string> {
  if (strategy.type === 'sentence_chunking_strategy') {
    yield* eachSentence(text);
    return;
  }
  const max = strategy.maxCharsPerChunk;
  let current = '';
  for (const s of eachSentence(text)) {
    if (s.length > max) {
      if (current) yield current;
      current = '';
      for (let i = 0; i < s.length; i += max) yield s.slice(i, i + max);
      continue;
    }
    const joined = current ? `${current} ${s}` : s;
    if (joined.length > max) {
      yield current;
      current = s;
    } else current = joined;
  }
  if (current) yield current;
}

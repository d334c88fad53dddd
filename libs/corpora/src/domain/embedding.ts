/**
 * A document's part vectors as its `DocumentIndexed` event carries them: one per part, in part order, each the
 * float32 values in little-endian byte order, Base64-encoded (~4/3 of 4 bytes per dimension: 536 characters
 * for 100 dimensions). The log keeps them so that replays and rebuilds never call an encoder again
 * (docs/search.md).
 */
export interface DocumentEmbedding {
  readonly encoder: string;
  readonly dimensions: number;
  readonly vectors: readonly string[];
}

/** Float32Array's own byte order is the machine's: on a little-endian one its bytes are the log's as they are. */
const LITTLE_ENDIAN = new Uint8Array(new Float32Array([1]).buffer)[3] === 0x3f;

export function encodeVector(vector: Float32Array): string {
  if (LITTLE_ENDIAN) return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64');
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((v, i) => bytes.writeFloatLE(v, i * 4));
  return bytes.toString('base64');
}

export function decodeVector(text: string): Float32Array {
  const bytes = Buffer.from(text, 'base64');
  // Copied out of the decoded buffer (often a slice of a shared pool, at any byte offset) into its own aligned one.
  if (LITTLE_ENDIAN) return new Float32Array(new Uint8Array(bytes).buffer, 0, bytes.byteLength >> 2);
  const out = new Float32Array(bytes.byteLength / 4);
  for (let i = 0; i < out.length; i++) out[i] = bytes.readFloatLE(i * 4);
  return out;
}

/**
 * What is embedded for a part: its heading (the section title, else the document title) and then its text, so
 * that a sentence chunk keeps the subject its heading names ("<title>. <sentence>" measured best on SciFact's
 * train queries, docs/encoders.md).
 */
export function embeddingText(part: { text: string; sectionTitle?: string }, documentTitle?: string): string {
  const heading = (part.sectionTitle ?? documentTitle ?? '').trim();
  return heading ? `${heading}. ${part.text}` : part.text;
}

import { ExtractionError, SUPPORTED_EXTENSIONS } from '@lib/extraction';
import type { ExtractFile } from '../../application/sources.port';
import { documentText } from './extract-text';

export type { ExtractFile } from '../../application/sources.port';

/** Extensions whose files are sent to the parser; any other file is skipped without being downloaded. */
const READABLE = new Set(SUPPORTED_EXTENSIONS);

/** Whether a file's name says the parser can read it (e-mail without an extension is the parser's guess, not ours). */
export function readableName(name: string): boolean {
  const dot = name.lastIndexOf('.');
  return dot > name.lastIndexOf('/') && READABLE.has(name.slice(dot + 1).toLowerCase());
}

/** A file's text as a record gets it, or why it was skipped (unsupported, corrupt, empty, too large for the parser). */
export async function fileText(extract: ExtractFile, file: Buffer, name: string): Promise<{ title: string | null; text: string; metadata: Readonly<Record<string, unknown>> } | { skipped: string }> {
  try {
    const doc = await extract(file, name);
    return { title: doc.title ?? null, text: documentText(doc), metadata: doc.metadata };
  } catch (e) {
    if (e instanceof ExtractionError) return { skipped: `${e.kind}: ${e.message}` };
    throw e;
  }
}

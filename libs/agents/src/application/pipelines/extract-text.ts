import type { ExtractedDocument, ExtractedSection, ExtractionPool } from '@lib/extraction';

/** Section titles and text in document order, tables as `a | b | c` rows: what a record's text can carry of a file. */
export function documentText(doc: ExtractedDocument): string {
  const out: string[] = [];
  const walk = (sections: readonly ExtractedSection[]) => {
    for (const s of sections) {
      if (s.title) out.push(s.title);
      if (s.text.trim()) out.push(s.text.trim());
      walk(s.sections ?? []);
    }
  };
  walk(doc.sections);
  for (const t of doc.tables) for (const row of [...t.headers, ...t.rows]) out.push(row.map((c) => String(Object.values(c)[0])).join(' | '));
  return out.join('\n\n');
}

/**
 * A file (an attachment, a drive file) to text through the upload formats' parsers, on the extraction pool's
 * worker threads (a hostile PDF holds one worker, bounded in time, not the run). Throws `ExtractionError`
 * (`unsupported`, `corrupt`, `empty`, `too_large`, `timeout`): the source skips the file with that reason.
 */
export const extractText = async (pool: ExtractionPool, file: Buffer, filename: string): Promise<string> => documentText(await pool.extract(file, filename, { extractTables: false }));

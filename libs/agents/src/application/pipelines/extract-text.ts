import type { ExtractedDocument, ExtractedSection } from '@lib/extraction';

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


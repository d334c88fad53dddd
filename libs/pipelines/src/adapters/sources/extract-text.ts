import type { ExtractedDocument, ExtractedSection } from '@lib/extraction';

function sectionText(sections: readonly ExtractedSection[]): string[] {
  return sections.flatMap((s) => [...(s.title ? [s.title] : []), ...(s.text.trim() ? [s.text.trim()] : []), ...sectionText(s.sections ?? [])]);
}

/** A file's text as a pipeline record carries it: titles and paragraphs in order, then each table's rows as `a | b` lines. */
export function documentText(doc: ExtractedDocument): string {
  const tables = doc.tables.map((t) => [...t.headers, ...t.rows].map((row) => row.map((c) => String(Object.values(c)[0])).join(' | ')).join('\n'));
  return [...sectionText(doc.sections), ...tables].join('\n\n');
}

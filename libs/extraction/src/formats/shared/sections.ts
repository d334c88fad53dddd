import { ExtractedSection } from '../../extracted';

/** A document flattened into reading order: what a format walker emits before sections are nested. */
export type Block = { readonly kind: 'heading'; readonly level: number; readonly text: string } | { readonly kind: 'paragraph'; readonly text: string };

export const heading = (level: number, text: string): Block => ({ kind: 'heading', level, text });
export const paragraph = (text: string): Block => ({ kind: 'paragraph', text });

interface OpenSection {
  readonly title?: string;
  readonly level: number;
  readonly paragraphs: string[];
  readonly children: OpenSection[];
}

/**
 * Nests sections by heading level: a heading opens a section inside the nearest open section of a lower
 * level, so a skipped level (h1 → h3) still nests. Text before the first heading becomes an untitled first
 * section. Empty headings and empty paragraphs are dropped.
 */
export function sectionsFromBlocks(blocks: readonly Block[]): ExtractedSection[] {
  const root: OpenSection = { level: 0, paragraphs: [], children: [] };
  const open: OpenSection[] = [root];
  for (const block of blocks) {
    if (block.text.trim() === '') continue;
    // Leading spaces of a paragraph may be meaningful (preformatted text); a heading's never are.
    const text = block.kind === 'heading' ? block.text.trim() : block.text.replace(/^(?:[ \t]*\n)+|\s+$/g, '');
    if (block.kind === 'paragraph') {
      open[open.length - 1].paragraphs.push(text);
      continue;
    }
    const level = Math.max(1, block.level);
    while (open[open.length - 1].level >= level) open.pop();
    const section: OpenSection = { title: text, level, paragraphs: [], children: [] };
    open[open.length - 1].children.push(section);
    open.push(section);
  }
  const lead: ExtractedSection[] = root.paragraphs.length > 0 ? [{ text: root.paragraphs.join('\n\n') }] : [];
  return [...lead, ...root.children.map(close)];
}

function close(section: OpenSection): ExtractedSection {
  const text = section.paragraphs.join('\n\n');
  return section.children.length > 0 ? { title: section.title, text, sections: section.children.map(close) } : { title: section.title, text };
}

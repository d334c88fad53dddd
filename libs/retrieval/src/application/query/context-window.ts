import { sentences } from '@lib/corpora';

/** The reference API's `context_configuration`: what surrounds a matched part in a result's text. */
export interface ContextWindow {
  readonly sentencesBefore?: number;
  readonly sentencesAfter?: number;
  readonly charactersBefore?: number;
  readonly charactersAfter?: number;
  readonly startTag?: string;
  readonly endTag?: string;
  /** The whole document around the part; before/after counts are ignored. */
  readonly fullDocument?: boolean;
}

export const hasContext = (w: ContextWindow | undefined): boolean =>
  !!w && !!(w.sentencesBefore || w.sentencesAfter || w.charactersBefore || w.charactersAfter || w.fullDocument || w.startTag || w.endTag);

/**
 * A matched part with its context from the document's parts (in order): sentences win over characters when
 * both are set (as the reference says); character windows are cut at the nearest word boundary inside them,
 * so no word is split. Parts are joined with one space, as chunking split them.
 */
export function withContext(parts: readonly string[], index: number, w: ContextWindow): string {
  const beforeText = parts.slice(0, index).join(' ');
  const afterText = parts.slice(index + 1).join(' ');
  let before = '';
  let after = '';
  if (w.fullDocument) {
    [before, after] = [beforeText, afterText];
  } else if (w.sentencesBefore || w.sentencesAfter) {
    before = w.sentencesBefore ? sentences(beforeText).slice(-w.sentencesBefore).join(' ') : '';
    after = w.sentencesAfter ? sentences(afterText).slice(0, w.sentencesAfter).join(' ') : '';
  } else {
    before = w.charactersBefore ? tailWords(beforeText, w.charactersBefore) : '';
    after = w.charactersAfter ? headWords(afterText, w.charactersAfter) : '';
  }
  const matched = `${w.startTag ?? ''}${parts[index]}${w.endTag ?? ''}`;
  return [before, matched, after].filter(Boolean).join(' ');
}

function tailWords(text: string, n: number): string {
  if (text.length <= n) return text;
  const cut = text.slice(-n);
  const space = cut.search(/\s/);
  return space < 0 ? '' : cut.slice(space + 1);
}

function headWords(text: string, n: number): string {
  if (text.length <= n) return text;
  const cut = text.slice(0, n);
  return /\s/.test(text[n]) ? cut : cut.slice(0, Math.max(0, cut.search(/\s\S*$/)));
}

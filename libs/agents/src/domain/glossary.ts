import { assertNever, invalid, notFound } from '@lib/platform/kernel';

/** A glossary (`/v2/glossaries`, stream `glossary-<key>`): terms and their expansions, for agents' user messages. */
export type GlossaryEvent =
  | { type: 'GlossaryCreated'; data: { key: string; name: string; description?: string; createdAt: string } }
  | { type: 'GlossaryUpdated'; data: { key: string; name: string; description?: string; updatedAt: string } }
  | { type: 'GlossaryDeleted'; data: { key: string; deletedAt: string } }
  | { type: 'GlossaryEntriesUpserted'; data: { key: string; entries: Record<string, string>; at: string } }
  | { type: 'GlossaryEntriesDeleted'; data: { key: string; terms: string[]; at: string } };

export type GlossaryState = { readonly status: 'absent' } | { readonly status: 'active'; readonly name: string; readonly description?: string };

export const glossaryFold = {
  initialState: { status: 'absent' } as GlossaryState,
  evolve(state: GlossaryState, event: GlossaryEvent): GlossaryState {
    switch (event.type) {
      case 'GlossaryCreated':
      case 'GlossaryUpdated':
        return { status: 'active', name: event.data.name, ...(event.data.description !== undefined ? { description: event.data.description } : {}) };
      case 'GlossaryDeleted':
        return { status: 'absent' };
      case 'GlossaryEntriesUpserted':
      case 'GlossaryEntriesDeleted':
        return state;
      default:
        return assertNever(event);
    }
  },
};

export const glossaryNotFound = (key: string) => notFound('glossary.not_found', `Glossary "${key}" does not exist`, key);
export const MAX_ENTRIES_PER_CALL = 1000;

export function checkEntries(entries: Record<string, unknown>): Record<string, string> {
  const names = Object.keys(entries);
  if (names.length === 0 || names.length > MAX_ENTRIES_PER_CALL) throw invalid('glossary.invalid', `Invalid entries: 1 to ${MAX_ENTRIES_PER_CALL} terms per call`, { entries: `1 to ${MAX_ENTRIES_PER_CALL} terms` });
  for (const [term, expansion] of Object.entries(entries)) {
    if (!term.trim() || term.length > 200) throw invalid('glossary.invalid', `Invalid entries.${term}: a term has 1 to 200 characters`, { [`entries.${term}`]: 'a term has 1 to 200 characters' });
    if (typeof expansion !== 'string' || !expansion.trim() || expansion.length > 1000) throw invalid('glossary.invalid', `Invalid entries.${term}: an expansion is a string of 1 to 1000 characters`, { [`entries.${term}`]: 'an expansion is a string of 1 to 1000 characters' });
  }
  return entries as Record<string, string>;
}

export function decideCreateGlossary(state: GlossaryState, key: string, name: string, description: string | undefined, now: Date): GlossaryEvent[] {
  if (state.status !== 'absent') throw invalid('glossary.key_taken', `A glossary with key "${key}" already exists: use another key`, { key: 'already taken' });
  return [{ type: 'GlossaryCreated', data: { key, name, ...(description !== undefined ? { description } : {}), createdAt: now.toISOString() } }];
}

/** Expands the glossary's terms found in `text` (whole words, any case): "term (expansion)", each term once. */
export function expandTerms(text: string, entries: ReadonlyMap<string, string>): string {
  if (!entries.size) return text;
  const terms = [...entries.keys()].sort((a, b) => b.length - a.length).map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  const lower = new Map([...entries].map(([t, e]) => [t.toLowerCase(), e]));
  const done = new Set<string>();
  return text.replace(new RegExp(`(?<![\\p{L}\\p{N}_])(${terms.join('|')})(?![\\p{L}\\p{N}_])`, 'giu'), (match) => {
    const key = match.toLowerCase();
    if (done.has(key)) return match;
    done.add(key);
    return `${match} (${lower.get(key)})`;
  });
}

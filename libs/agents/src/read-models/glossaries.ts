import { collection } from '@lib/platform/projections';

/** One row per glossary, keyed by its key. */
export type GlossaryRow = { readonly id: string; readonly name: string; readonly description?: string | null; readonly created_at: string; readonly updated_at: string };
export const GLOSSARIES = collection<GlossaryRow>('glossaries');

/** One row per term, keyed `<glossary key>\u0000<term>`. */
export type GlossaryEntryRow = { readonly id: string; readonly glossary_key: string; readonly term: string; readonly expansion: string };
export const GLOSSARY_ENTRIES = collection<GlossaryEntryRow>('glossary_entries');
export const glossaryEntryId = (key: string, term: string) => `${key}\u0000${term}`;

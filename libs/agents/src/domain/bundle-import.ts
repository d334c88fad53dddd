import { conflict } from '@lib/platform/kernel';
import type { BundledGlossary, BundledInstruction } from './agent-bundle';
import { sameJson } from './agent-bundle';
import { GlossaryEvent, GlossaryState, MAX_ENTRIES_PER_CALL } from './glossary';
import { InstructionContent, InstructionEvent, InstructionState, latestVersion } from './instruction';

/** What an import does with one object: create it, reuse the identical one there, or stop on one that differs. */
export type ImportOutcome = { readonly outcome: 'create' } | { readonly outcome: 'reuse' } | { readonly outcome: 'conflict'; readonly reason: string };

export const contentOf = (v: BundledInstruction): InstructionContent => ({ name: v.name, description: v.description ?? '', templateType: v.template_type, template: v.template, metadata: v.metadata ?? {}, enabled: v.enabled ?? true });

/**
 * An instruction of the bundle (its versions, `followLatest`: the versions the agent names without a number, which
 * must stay the latest) against the target's: absent → create; each version there with the same content (and
 * the followed one still the latest) → reuse; else a conflict saying what differs.
 */
export function instructionOutcome(state: InstructionState, versions: readonly BundledInstruction[], followLatest: ReadonlySet<number>): ImportOutcome {
  if (state.status === 'absent') return { outcome: 'create' };
  for (const v of versions) {
    const there = state.versions[v.version];
    if (!there) return { outcome: 'conflict', reason: `has no version ${v.version} here` };
    if (!sameJson(there, contentOf(v))) return { outcome: 'conflict', reason: `its version ${v.version} differs here` };
  }
  const latest = latestVersion(state);
  const followed = [...followLatest].find((v) => v !== latest);
  if (followed !== undefined) return { outcome: 'conflict', reason: `the agent follows its latest version, ${followed} in the bundle but ${latest} here` };
  return { outcome: 'reuse' };
}

/**
 * The events that create an imported instruction under its own id and version numbers (ascending, so the
 * bundle's highest is the latest, as it was where it was exported). Numbers the bundle skips are never given.
 */
export function decideImportInstruction(state: InstructionState, id: string, versions: readonly BundledInstruction[], now: Date): InstructionEvent[] {
  if (state.status !== 'absent') throw conflict('instruction.id_taken', `An instruction with id "${id}" already exists`);
  const at = now.toISOString();
  const sorted = [...versions].sort((a, b) => a.version - b.version);
  return sorted.map((v, i) => ({
    type: 'InstructionVersionCreated' as const,
    data: { instructionId: id, version: v.version, ...(i > 0 ? { supersedes: sorted[i - 1].version } : {}), ...contentOf(v), instructionCreatedAt: at, createdAt: at },
  }));
}

/** A glossary of the bundle against the target's (its name, description and every entry). */
export function glossaryOutcome(state: GlossaryState, entries: ReadonlyMap<string, string>, bundled: BundledGlossary): ImportOutcome {
  if (state.status === 'absent') return { outcome: 'create' };
  if (state.name !== bundled.name || (state.description ?? undefined) !== (bundled.description ?? undefined)) return { outcome: 'conflict', reason: 'its name or description differs here' };
  if (!sameJson(Object.fromEntries(entries), bundled.entries)) return { outcome: 'conflict', reason: 'its entries differ here' };
  return { outcome: 'reuse' };
}

/** The glossary and its entries in one append (entries in chunks of the per-call bound), so it is never half there. */
export function decideImportGlossary(state: GlossaryState, bundled: BundledGlossary, now: Date): GlossaryEvent[] {
  if (state.status !== 'absent') throw conflict('glossary.key_taken', `A glossary with key "${bundled.key}" already exists`);
  const at = now.toISOString();
  const terms = Object.entries(bundled.entries);
  const events: GlossaryEvent[] = [{ type: 'GlossaryCreated', data: { key: bundled.key, name: bundled.name, ...(bundled.description !== undefined ? { description: bundled.description } : {}), createdAt: at } }];
  for (let i = 0; i < terms.length; i += MAX_ENTRIES_PER_CALL) events.push({ type: 'GlossaryEntriesUpserted', data: { key: bundled.key, entries: Object.fromEntries(terms.slice(i, i + MAX_ENTRIES_PER_CALL)), at } });
  return events;
}

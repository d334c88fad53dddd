import { Inject, Injectable } from '@nestjs/common';
import { CommandContext, findMatching, ID_GENERATOR, IdGenerator, keyFromName, PROJECTION_PROGRESS, ProjectionProgress, READ_STORE, ReadStore, SERVICE_CONFIG, ServiceConfig, StreamWriter, streamId, type TextPattern } from '@lib/platform';
import { checkEntries, decideCreateGlossary, GlossaryEvent, glossaryFold, glossaryNotFound, GlossaryState } from '../../domain/glossary';
import { GLOSSARIES, GLOSSARY_ENTRIES, GlossaryEntryRow, GlossaryRow } from '../../read-models';
import type { ReferenceCheck } from '../agent-writer';

const stream = (key: string) => streamId('glossary', key);

/** Glossaries (`/v2/glossaries`, entries) and what agents read of them. */
@Injectable()
export class Glossaries {
  constructor(
    private readonly streams: StreamWriter,
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
    @Inject(PROJECTION_PROGRESS) private readonly progress: ProjectionProgress,
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
  ) {}

  private write(key: string, decide: (s: GlossaryState) => GlossaryEvent[], ctx: CommandContext) {
    return this.streams.write<GlossaryState, GlossaryEvent>(stream(key), glossaryFold, decide, ctx, ['glossaries']);
  }

  private active(key: string, s: GlossaryState): Extract<GlossaryState, { status: 'active' }> {
    if (s.status === 'absent') throw glossaryNotFound(key);
    return s;
  }

  async create(input: { key?: string; name: string; description?: string }, ctx: CommandContext) {
    const key = input.key ?? keyFromName(input.name, this.ids.uuid().slice(0, 8));
    await this.write(key, (s) => decideCreateGlossary(s, key, input.name, input.description, ctx.now), ctx);
    return this.get(key);
  }

  async update(key: string, input: { name?: string; description?: string }, ctx: CommandContext) {
    await this.write(key, (s) => {
      const g = this.active(key, s);
      return [{ type: 'GlossaryUpdated', data: { key, name: input.name ?? g.name, ...((input.description ?? g.description) !== undefined ? { description: input.description ?? g.description } : {}), updatedAt: ctx.now.toISOString() } }];
    }, ctx);
    return this.get(key);
  }

  async remove(key: string, ctx: CommandContext): Promise<void> {
    const { position } = await this.write(key, (s) => (this.active(key, s), [{ type: 'GlossaryDeleted', data: { key, deletedAt: ctx.now.toISOString() } }]), ctx);
    await this.progress.waitFor(position, ['glossaries'], this.config.readYourWritesTimeoutMs);
  }

  async upsert(key: string, entries: Record<string, unknown>, ctx: CommandContext): Promise<void> {
    const checked = checkEntries(entries);
    await this.write(key, (s) => (this.active(key, s), [{ type: 'GlossaryEntriesUpserted', data: { key, entries: checked, at: ctx.now.toISOString() } }]), ctx);
  }

  async deleteTerms(key: string, terms: string[], ctx: CommandContext): Promise<void> {
    await this.write(key, (s) => (this.active(key, s), terms.length ? [{ type: 'GlossaryEntriesDeleted', data: { key, terms, at: ctx.now.toISOString() } }] : []), ctx);
  }

  async get(key: string): Promise<Record<string, unknown>> {
    const row = await this.reads.get<GlossaryRow>(GLOSSARIES, key);
    if (!row) throw glossaryNotFound(key);
    return { key: row.id, name: row.name, ...(row.description ? { description: row.description } : {}), num_entries: await this.reads.count(GLOSSARY_ENTRIES, [{ field: 'glossary_key', op: 'eq', value: key }]), created_at: row.created_at, updated_at: row.updated_at };
  }

  async list(limit: number, pageKey?: string, filter?: TextPattern) {
    const page = await findMatching<GlossaryRow>(this.reads, GLOSSARIES, { limit, pageKey }, (r) => !filter || filter.test(r.name) || filter.test(r.description ?? ''));
    return { glossaries: await Promise.all(page.items.map((r) => this.get(r.id))), metadata: page.nextPageKey ? { page_key: page.nextPageKey } : {} };
  }

  async entries(key: string, limit: number, pageKey?: string) {
    await this.get(key);
    const page = await this.reads.find<GlossaryEntryRow>(GLOSSARY_ENTRIES, { where: [{ field: 'glossary_key', op: 'eq', value: key }], sort: { field: 'term', direction: 'asc' }, limit, pageKey });
    return { entries: page.items.map((e) => ({ term: e.term, expansion: e.expansion })), metadata: page.nextPageKey ? { page_key: page.nextPageKey } : {} };
  }

  /** Every term of a glossary, for the `glossary_expansion` reminder (empty for a glossary that is gone). */
  async all(key: string): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    let pageKey: string | undefined;
    do {
      const page = await this.reads.find<GlossaryEntryRow>(GLOSSARY_ENTRIES, { where: [{ field: 'glossary_key', op: 'eq', value: key }], limit: 1000, pageKey });
      for (const e of page.items) out.set(e.term, e.expansion);
      pageKey = page.nextPageKey;
    } while (pageKey && out.size < 100_000);
    return out;
  }
}

/** `glossary_expansion` reminders name glossaries that exist (400 naming the reminder). */
export const glossaryReminderCheck =
  (reads: ReadStore): ReferenceCheck =>
  async (config) => {
    const problems: Record<string, string> = {};
    for (const [name, step] of Object.entries(config.steps)) {
      for (const [i, r] of step.reminders.entries()) {
        const key = (r as unknown as { type: string; glossary_key?: unknown }).glossary_key;
        if ((r as { type: string }).type === 'glossary_expansion' && !(typeof key === 'string' && (await reads.get(GLOSSARIES, key)))) problems[`steps.${name}.reminders[${i}].glossary_key`] = `no glossary "${String(key)}"`;
      }
    }
    return problems;
  };

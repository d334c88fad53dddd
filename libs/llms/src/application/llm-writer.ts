import { Inject, Injectable } from '@nestjs/common';
import { CommandContext, Fold, READ_STORE, ReadStore, StreamWriter, streamId } from '@lib/platform';
import { llmNotFound } from '../domain/llm';
import { LLMS, LlmRow } from '../read-models';

export const llmStream = (name: string): string => streamId('llm', name);


/** The registry's write path (one stream per model name, which makes names unique) and its lookups. */
@Injectable()
export class LlmWriter {
  constructor(
    private readonly streams: StreamWriter,
    @Inject(READ_STORE) private readonly reads: ReadStore,
  ) {}

  write<S, E extends { type: string; data: unknown }>(name: string, fold: Fold<S, E>, decide: (state: S) => readonly E[], ctx: CommandContext) {
    return this.streams.write(llmStream(name), fold, decide, ctx, ['llms']);
  }

  /** The name of the model that `llm_id` names: the path parameter takes an id (`llm_…`) or a name. */
  async nameOf(nameOrId: string): Promise<string> {
    return (await findLlm(this.reads, nameOrId))?.name ?? nameOrId;
  }
}

/** A registered model by id or by name; undefined when neither matches. */
export async function findLlm(reads: ReadStore, nameOrId: string): Promise<LlmRow | undefined> {
  const byId = await reads.get<LlmRow>(LLMS, nameOrId);
  if (byId) return byId;
  const page = await reads.find<LlmRow>(LLMS, { where: [{ field: 'name', op: 'eq', value: nameOrId }], limit: 1 });
  return page.items[0];
}

export async function requireLlm(reads: ReadStore, nameOrId: string): Promise<LlmRow> {
  const row = await findLlm(reads, nameOrId);
  if (!row) throw llmNotFound(nameOrId);
  return row;
}

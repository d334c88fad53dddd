import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandContext, ID_GENERATOR, IdGenerator, invalid, OUTBOUND_HTTP, OutboundHttp, WriteResult } from '@lib/platform';
import { authContentProblems, LlmAuth, splitAuth, StoredAuth } from '../../domain/auth';
import { inferCapabilities, LlmCapabilities } from '../../domain/capabilities';
import { decideCreateLlm, defaultUri, llmFold, LlmType } from '../../domain/llm';
import type { Quota } from '../../domain/quota';
import { LlmWriter } from '../llm-writer';
import { checkOutboundTargets } from '../outbound-targets';
import { SecretBox } from '../secrets/secret-box';

/** A model's configuration as a caller gives it: auth in clear (sealed before it reaches an event). */
export interface LlmInput {
  readonly type?: LlmType;
  readonly model?: string;
  readonly uri?: string;
  readonly description?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Null clears it (provider default). */
  readonly idleTimeoutSeconds?: number | null;
  readonly capabilities?: Partial<LlmCapabilities>;
  /** Null removes it; an object replaces the whole quota. */
  readonly quota?: Quota | null;
  readonly enabled?: boolean;
  readonly auth?: LlmAuth;
}

/**
 * Seals an auth variant for the model `llmId`: identifiers in clear, secrets encrypted and bound to the id.
 * The secrets' content is checked first (e.g. a service-account key parses): once sealed, nothing can look.
 */
export function sealAuth(box: SecretBox, llmId: string, auth: LlmAuth): StoredAuth {
  const problems = authContentProblems(auth);
  const first = Object.entries(problems)[0];
  if (first) throw invalid('llm.invalid_auth', `Invalid ${first[0]}: ${first[1]}`, problems);
  const { identifiers, secrets } = splitAuth(auth);
  return { type: auth.type, identifiers, sealed: box.seal(secrets, `llm:${llmId}`) };
}

export class CreateLlm {
  constructor(
    readonly name: string,
    /** `uri` may be omitted where the type has a default (Anthropic) or takes its endpoint from the auth (Bedrock, Vertex). */
    readonly input: LlmInput & { readonly model: string },
    readonly ctx: CommandContext,
  ) {}
}

@CommandHandler(CreateLlm)
export class CreateLlmHandler implements ICommandHandler<CreateLlm, WriteResult<{ llmId: string }>> {
  constructor(
    private readonly writer: LlmWriter,
    private readonly box: SecretBox,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
    @Inject(OUTBOUND_HTTP) private readonly outbound: OutboundHttp,
  ) {}

  async execute({ name, input, ctx }: CreateLlm): Promise<WriteResult<{ llmId: string }>> {
    const llmId = this.ids.numeric('llm');
    const type = input.type ?? 'openai-compatible';
    await checkOutboundTargets(this.outbound.policy, { uri: input.uri, auth: input.auth });
    const settings = {
      type,
      model: input.model,
      uri: input.uri ?? defaultUri(type, input.auth?.type) ?? '',
      description: input.description ?? '',
      headers: input.headers ?? {},
      idleTimeoutSeconds: input.idleTimeoutSeconds ?? null,
      capabilities: { ...inferCapabilities(input.model), ...input.capabilities },
      quota: input.quota ?? null,
      enabled: input.enabled ?? true,
      auth: input.auth ? sealAuth(this.box, llmId, input.auth) : null,
    };
    const { position, visible } = await this.writer.write(name, llmFold, (s) => decideCreateLlm(s, { llmId, name, settings }, ctx.now), ctx);
    return { value: { llmId }, position, visible };
  }
}

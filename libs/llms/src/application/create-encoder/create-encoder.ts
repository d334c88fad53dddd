import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { ENCODER_REGISTRY, EncoderRegistry, ModelSource, NO_ENCODER, ONNX_MODEL_SOURCE } from '@lib/encoders';
import { CommandContext, conflict, DomainError, ID_GENERATOR, IdGenerator, invalid, OUTBOUND_HTTP, OutboundHttp, StreamWriter, streamId, WriteResult } from '@lib/platform';
import { LlmAuth, splitAuth, StoredAuth } from '../../domain/auth';
import { decideCreateEncoder, encoderFold, EncoderSettings } from '../../domain/encoder';
import { encoderRow, EncoderRow } from '../../read-models';
import { endpointEncoder, encoderSecretAad } from '../encoders/registered-encoders';
import { checkOutboundTargets } from '../outbound-targets';
import { SecretBox } from '../secrets/secret-box';
import { onnxEncoderSettings, OnnxEncoderInput } from './onnx-encoder-settings';

export const encoderStream = (name: string): string => streamId('encoder', name);

/** The reference's `CreateOpenAIEncoderRequest`, auth in clear (sealed before it reaches an event). */
export interface EndpointEncoderInput {
  readonly type: 'openai-compatible';
  readonly name: string;
  readonly description: string;
  readonly uri: string;
  readonly model: string;
  readonly outputDimensions?: number;
  readonly auth?: LlmAuth;
}

/** An embedding endpoint, or an ONNX model run inside the service. */
export type EncoderInput = EndpointEncoderInput | OnnxEncoderInput;

export class CreateEncoder {
  constructor(
    readonly input: EncoderInput,
    readonly ctx: CommandContext,
  ) {}
}

/**
 * Registers an embedding endpoint: the name must be free (configured encoders included), the endpoint allowed by
 * the outbound policy, and one probe call must answer with an embedding (of `output_dimensions` numbers when
 * asked), so a corpus never records an encoder that cannot work. Nothing is stored when any of that fails. An
 * `onnx` encoder is checked the same way by running its model (onnx-encoder-settings.ts).
 */
@CommandHandler(CreateEncoder)
export class CreateEncoderHandler implements ICommandHandler<CreateEncoder, WriteResult<EncoderRow>> {
  constructor(
    private readonly writer: StreamWriter,
    private readonly box: SecretBox,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
    @Inject(OUTBOUND_HTTP) private readonly outbound: OutboundHttp,
    @Inject(ENCODER_REGISTRY) private readonly registry: EncoderRegistry,
    @Inject(ONNX_MODEL_SOURCE) private readonly models: ModelSource,
  ) {}

  async execute({ input, ctx }: CreateEncoder): Promise<WriteResult<EncoderRow>> {
    if (input.name === NO_ENCODER) throw conflict('encoder.name_taken', `"${NO_ENCODER}" is reserved: a corpus created with encoder_name "${NO_ENCODER}" has no encoder`);
    if (this.registry.configures(input.name)) throw conflict('encoder.name_taken', `"${input.name}" is the name of an encoder of this service's configuration`);
    const encoderId = this.ids.numeric('enc');
    const settings = input.type === 'onnx' ? await onnxEncoderSettings(this.models, input) : await this.endpointSettings(encoderId, input);
    const { events, position, visible } = await this.writer.write(encoderStream(input.name), encoderFold, (s) => decideCreateEncoder(s, { encoderId, name: input.name, settings }, ctx.now), ctx, ['encoders']);
    return { value: encoderRow(events[0].data), position, visible };
  }

  private async endpointSettings(encoderId: string, input: EndpointEncoderInput): Promise<EncoderSettings> {
    if (input.auth && input.auth.type !== 'bearer' && input.auth.type !== 'header') {
      throw invalid('encoder.unsupported_auth', 'Invalid auth.type: an encoder takes "bearer" or "header" auth', { 'auth.type': 'must be "bearer" or "header"' });
    }
    await checkOutboundTargets(this.outbound.policy, { uri: input.uri, auth: input.auth });
    const auth: StoredAuth | null = input.auth ? (({ identifiers, secrets }) => ({ type: input.auth!.type, identifiers, sealed: this.box.seal(secrets, encoderSecretAad(encoderId)) }))(splitAuth(input.auth)) : null;
    const outputDimensions = await this.probe(encoderId, input, auth);
    return { type: 'openai-compatible', description: input.description, uri: input.uri, model: input.model, outputDimensions, sendDimensions: input.outputDimensions !== undefined, auth };
  }

  private async probe(encoderId: string, input: EndpointEncoderInput, auth: StoredAuth | null): Promise<number> {
    const encoder = endpointEncoder(this.box, this.outbound, { id: encoderId, name: input.name, uri: input.uri, model: input.model, dimensions: input.outputDimensions ?? 0, sendDimensions: input.outputDimensions !== undefined, auth });
    let dimensions: number;
    try {
      dimensions = await encoder.probeDimensions();
    } catch (e) {
      if (!(e instanceof DomainError)) throw e;
      // The caller's endpoint or credentials are wrong: a 400 naming the field, not a 502 of ours.
      throw invalid('encoder.probe_failed', `Invalid uri: the endpoint did not embed a test text (${e.message})`, { uri: e.message });
    }
    if (input.outputDimensions !== undefined && dimensions !== input.outputDimensions) {
      const why = `the endpoint returned ${dimensions} dimensions, not the ${input.outputDimensions} asked for`;
      throw invalid('encoder.dimensions_mismatch', `Invalid output_dimensions: ${why}`, { output_dimensions: why });
    }
    return dimensions;
  }
}

import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { Encoder, ENCODER_REGISTRY, EncoderDescriptor, EncoderRegistry, EncoderSource, inspectModelDir, OnnxEncoder, OpenAiEmbeddingsEncoder } from '@lib/encoders';
import { DomainError, OUTBOUND_HTTP, OutboundHttp, READ_STORE, ReadStore } from '@lib/platform';
import type { StoredAuth } from '../../domain/auth';
import { ENCODERS, EncoderRow } from '../../read-models';
import { SecretBox } from '../secrets/secret-box';

/** The additional data a registered encoder's secrets are sealed with: they open only for that encoder. */
export const encoderSecretAad = (encoderId: string): string => `encoder:${encoderId}`;

/** How a stored credential goes on the wire: a bearer token, or one header. */
export function authHeaders(box: SecretBox, auth: StoredAuth | null, aad: string): { apiKey?: string; headers?: Record<string, string> } {
  if (!auth) return {};
  const secrets = box.open(auth.sealed, aad);
  if (auth.type === 'bearer') return { apiKey: secrets.token };
  if (auth.type === 'header') return { headers: { [String(auth.identifiers.header)]: secrets.value } };
  return {};
}

/** An encoder for a registered endpoint, calling out through the guarded client. */
export function endpointEncoder(box: SecretBox, outbound: OutboundHttp, e: { id: string; name: string; uri: string; model: string; dimensions: number; sendDimensions: boolean; auth: StoredAuth | null }): OpenAiEmbeddingsEncoder {
  return new OpenAiEmbeddingsEncoder({
    name: e.name,
    baseUrl: e.uri,
    endpointUrl: e.uri,
    model: e.model,
    dimensions: e.dimensions,
    sendDimensions: e.sendDimensions,
    fetch: outbound.fetch,
    ...authHeaders(box, e.auth, encoderSecretAad(e.id)),
  });
}

/**
 * An in-process model registered earlier: its directory is checked again (it may have been removed since), and it
 * runs with the settings pinned at registration; it loads on first use.
 */
function onnxEncoder(row: EncoderRow): OnnxEncoder {
  const onnx = row.onnx!;
  try {
    const files = inspectModelDir(onnx.model_dir, { file: onnx.file, overrides: onnx.settings, modelId: row.model || undefined });
    return new OnnxEncoder({ name: row.name, files }, row.output_dimensions);
  } catch (e) {
    throw new DomainError('unavailable', 'encoder.load_failed', `The encoder "${row.name}" cannot load its model: ${(e as Error).message}`);
  }
}

/**
 * The encoders registered through `POST /v2/encoders`, as the encoder registry's source: corpora resolve them by
 * name like configured ones. An encoder is built once per process (its settings never change after creation).
 */
@Injectable()
export class RegisteredEncoders implements EncoderSource, OnModuleInit, OnModuleDestroy {
  private readonly built = new Map<string, Encoder>();

  constructor(
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(OUTBOUND_HTTP) private readonly outbound: OutboundHttp,
    @Inject(ENCODER_REGISTRY) private readonly registry: EncoderRegistry,
    private readonly box: SecretBox,
  ) {}

  onModuleInit(): void {
    this.registry.attach(this);
  }

  /** Stops the worker threads of in-process models. */
  async onModuleDestroy(): Promise<void> {
    await Promise.all([...this.built.values()].map((e) => (e instanceof OnnxEncoder ? e.close() : undefined)));
  }

  async find(name: string): Promise<Encoder | undefined> {
    const row = (await this.reads.find<EncoderRow>(ENCODERS, { where: [{ field: 'name', op: 'eq', value: name }], limit: 1 })).items[0];
    if (!row) return undefined;
    if (!this.built.has(row.id) && row.onnx) this.built.set(row.id, onnxEncoder(row));
    if (!this.built.has(row.id)) {
      this.built.set(row.id, endpointEncoder(this.box, this.outbound, { id: row.id, name: row.name, uri: row.uri, model: row.model, dimensions: row.output_dimensions, sendDimensions: row.send_dimensions, auth: row.auth }));
    }
    return this.built.get(row.id);
  }

  async list(): Promise<EncoderDescriptor[]> {
    const rows = await this.reads.find<EncoderRow>(ENCODERS, { sort: { field: 'created_at', direction: 'asc' }, limit: 1000 });
    return rows.items.map((r) => ({ id: r.id, name: r.name, type: r.type, output_dimensions: r.output_dimensions, description: r.description, default: false, enabled: r.enabled, image_encoding: false }));
  }
}

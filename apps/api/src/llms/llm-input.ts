import { AUTH_FIELDS, LlmAuth, LlmInput } from '@lib/llms';
import { validationError } from '../http/validation';
import type { AuthDto, UpdateLlmDto } from './llms.dto';

/** The auth variant a DTO names, with exactly the fields that variant takes (the reference's auth schemas). */
export function toAuth(dto: AuthDto): LlmAuth {
  const fields = AUTH_FIELDS[dto.type];
  const allowed = new Set(['type', ...fields.required, ...(fields.optional ?? [])]);
  const errors: Record<string, string> = {};
  for (const f of fields.required) if ((dto as unknown as Record<string, unknown>)[f] === undefined) errors[`auth.${f}`] = `required for auth type ${dto.type}`;
  for (const [k, v] of Object.entries(dto)) if (v !== undefined && !allowed.has(k)) errors[`auth.${k}`] = `not a field of auth type ${dto.type}`;
  if (Object.keys(errors).length) throw validationError(errors);
  return Object.fromEntries(Object.entries(dto).filter(([, v]) => v !== undefined)) as unknown as LlmAuth;
}

/** A validated body as the registry's input; `raw` tells an explicit `null` (clear) from an absent field (keep). */
export function toLlmInput(dto: UpdateLlmDto, raw: Record<string, unknown>): LlmInput {
  if (dto.headers) {
    const bad = Object.entries(dto.headers).find(([, v]) => typeof v !== 'string');
    if (bad) throw validationError({ [`headers.${bad[0]}`]: 'must be a string' });
  }
  const strip = <T extends object>(o: T | undefined) => (o ? (Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T) : undefined);
  return {
    type: dto.type,
    model: dto.model,
    uri: dto.uri,
    description: dto.description,
    headers: dto.headers,
    idleTimeoutSeconds: raw.idle_timeout_seconds === null ? null : (dto.idle_timeout_seconds ?? undefined),
    capabilities: strip(dto.capabilities),
    quota: raw.llm_quota === null ? null : strip(dto.llm_quota ?? undefined),
    enabled: dto.enabled,
    auth: dto.auth ? toAuth(dto.auth) : undefined,
  };
}

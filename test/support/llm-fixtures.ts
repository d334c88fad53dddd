import OpenAI from 'openai';
import type { ScriptedOpenAIServer } from '@lib/testing';
import type { TestApp } from './test-app';

/** Registers the scripted server as a model; returns the created LLM body. */
export async function registerScripted(app: TestApp, server: ScriptedOpenAIServer, name: string, extra: Record<string, unknown> = {}) {
  const res = await app.call('POST', '/v2/llms', { type: 'openai-compatible', name, model: `${name}-upstream`, uri: `${server.baseURL}/chat/completions`, ...extra });
  if (res.status !== 201) throw new Error(`register ${name} → ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** The official OpenAI client pointed at the service (our key in x-api-key, which the service reads first). */
export const openaiFor = (app: TestApp, key = app.key) => new OpenAI({ apiKey: 'unused', baseURL: `${app.url}/v2/llms`, defaultHeaders: { 'x-api-key': key }, maxRetries: 0 });

import { splitSystem, translateRequest } from './chat-translation';
import { Readable } from 'node:stream';
import { serverSentChunks } from './openai/openai-compatible-chat';
import type { OpenAiHttpResponse } from './openai/openai-http';
import { classifyOpenAiError } from './openai/openai-errors';

describe('translating OpenAI chat requests for other providers', () => {
  const body = (extra: Record<string, unknown> = {}, messages: unknown[] = [{ role: 'user', content: 'hi' }]) => ({ model: 'm', messages: messages as never, ...extra });

  it('maps the common fields, folds developer into system and keeps the order of turns', () => {
    const chat = translateRequest(
      body({ temperature: 0.3, max_completion_tokens: 20, top_p: 0.9, stop: 'END', stream: true, n: 1 }, [
        { role: 'developer', content: 'rules' },
        { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] },
        { role: 'assistant', content: 'ok' },
      ]),
      'anthropic',
    );
    expect(chat).toMatchObject({ temperature: 0.3, maxTokens: 20, topP: 0.9, stop: ['END'] });
    expect(splitSystem(chat.turns)).toEqual({
      system: 'rules',
      turns: [
        { role: 'user', parts: [{ type: 'text', text: 'look' }, { type: 'image', url: 'data:image/png;base64,AAAA', mimeType: 'image/png', base64: 'AAAA' }] },
        { role: 'assistant', parts: [{ type: 'text', text: 'ok' }] },
      ],
    });
  });

  it('refuses what it cannot translate, naming each field', () => {
    const refused = (b: ReturnType<typeof body>, extras: string[] = [], webImages = true) => {
      try {
        translateRequest(b, 'vertex-ai', extras, { webImages });
      } catch (e) {
        return (e as { details: { fieldErrors: Record<string, string> } }).details.fieldErrors;
      }
      throw new Error('not refused');
    };
    expect(refused(body({ tools: [], response_format: { type: 'json_object' }, n: 2 }))).toEqual(expect.objectContaining({ tools: expect.any(String), response_format: expect.any(String), n: expect.any(String) }));
    expect(refused(body({}, [{ role: 'tool', content: 'x', tool_call_id: 'c' }]))).toHaveProperty(['messages.0']);
    expect(refused(body({}, [{ role: 'user', content: 'x', name: 'bob' }]))).toHaveProperty(['messages.0.name']);
    expect(refused(body({}, [{ role: 'system', content: 'only a system prompt' }]))).toHaveProperty('messages');
    expect(refused(body({}, [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/cat.png' } }] }]), [], false)).toHaveProperty(['messages.0.content.0.image_url']);
    expect(translateRequest(body({ seed: 7 }), 'vertex-ai', ['seed']).extra).toEqual({ seed: 7 });
    // OpenAI's neutral defaults ask for nothing, so any type takes them.
    expect(() => translateRequest(body({ n: 1, frequency_penalty: 0, presence_penalty: 0 }), 'anthropic')).not.toThrow();
    expect(() => translateRequest(body({ frequency_penalty: 0.5 }), 'anthropic')).toThrow(/frequency_penalty/);
  });
});

describe('reading an OpenAI-compatible event stream', () => {
  // The body as undici's request gives it: a Node readable of Buffers.
  const response = (...parts: string[]) => ({ statusCode: 200, headers: {}, body: Readable.from(parts.map((p) => Buffer.from(p))) }) as unknown as OpenAiHttpResponse;
  const read = async (r: OpenAiHttpResponse) => {
    const out: string[] = [];
    for await (const item of serverSentChunks(r)) out.push(item.json!);
    return out;
  };

  it('splits events across network chunks and CRLF framing, skips comments, stops at [DONE]', async () => {
    const items = await read(response(': keep-alive\n\ndata: {"id":"a","choi', 'ces":[]}\r\n\r\ndata: {"id":"b","choices":[]}\n\n', 'data: [DONE]\n\ndata: {"id":"late"}\n\n'));
    expect(items).toEqual(['{"id":"a","choices":[]}', '{"id":"b","choices":[]}']);
  });

  it('raises an in-stream error event', async () => {
    await expect(read(response('data: {"error":{"message":"overloaded"}}\n\n'))).rejects.toThrow(/overloaded/);
  });

  it('reads an event split into many small pieces, a blank line straddling two of them', async () => {
    const event = `data: {"id":"long","choices":[],"pad":"${'x'.repeat(5000)}"}\r\n\r\n`;
    const pieces = event.match(/[\s\S]{1,7}/g)!;
    const items = await read(response(...pieces, 'data: {"id":"b","choices":[]}\n', '\ndata: [DONE]\n\n'));
    expect(items.map((j) => JSON.parse(j).id)).toEqual(['long', 'b']);
  });

  it('refuses an event past the answer bound instead of holding it whole', async () => {
    const piece = 'x'.repeat(64 * 1024);
    const endless = new Readable({ read() { this.push(piece); } });
    const failure = await read({ statusCode: 200, headers: {}, body: endless } as unknown as OpenAiHttpResponse).catch((e: unknown) => e);
    expect(classifyOpenAiError(failure)).toEqual({ kind: 'other', message: expect.stringMatching(/event over 32 MB/) });
    expect(endless.destroyed).toBe(true);
  });

  it('a body that breaks off fails as the SDK connection error with its cause, after the events before it', async () => {
    const body = new Readable({ read() {} });
    const out: string[] = [];
    const reading = (async () => {
      for await (const item of serverSentChunks({ statusCode: 200, headers: {}, body } as unknown as OpenAiHttpResponse)) out.push(item.json!);
    })();
    body.push('data: {"id":"a","choices":[]}\n\n');
    setImmediate(() => body.destroy(new Error('other side closed')));
    const failure = await reading.catch((e: unknown) => e);
    expect(out).toEqual(['{"id":"a","choices":[]}']);
    expect(classifyOpenAiError(failure)).toEqual({ kind: 'unreachable', message: 'other side closed' });
  });
});

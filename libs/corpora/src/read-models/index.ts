/** The corpora read models: row types, collections, the rows events make, and views. Loads no adapter or framework. */
export * from './corpora';
export * from './documents';
export * from './document-images';
export * from './jobs';

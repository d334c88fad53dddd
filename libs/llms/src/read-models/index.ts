/** The llms read model: row type, collection, the rows events make, and view. Loads no SDK, adapter or framework. */
export * from './llms';
export * from './generation-presets';
export * from './encoders';

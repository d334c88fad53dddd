/** The aliases read model: row type, collection and view. Loads no use case, adapter or framework. */
export * from './aliases';

// Placeholder so that the module builds; the wrapper lands in its own change.

"""What the loaders share: reading JSON and JSON lines, content blocks, builders and
the links between calls and results."""

"""What the requests cost and what would save: usage, prices, the prompt-cache replay,
cache losses, the request table, advice and the report."""

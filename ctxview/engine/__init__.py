"""The engine: the rules of SwarmSDK's context manager and what finishes them (tiers,
reminders, the budget, summaries, clearing, bloat), in the counter's tokens."""

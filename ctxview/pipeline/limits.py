"""Every limit of the cached pipeline's tables, in one place.

A table that reaches its limit is emptied (not trimmed): the tables are
memos, and emptying is what keeps a long session's memory bounded whatever
settings are tried. PipelineCache.clear() empties them all at once.
"""

ENTRIES = 1_000_000      # per-message tables: counts, spans, rows, embeddings, blanked messages
KEPT = 8                 # per conversation: remembered views, stages, stage-0 histories, units
TABLES = 64              # tables of tables: conversations, row tables per policy, placeholders, events
SHORT_TEXTS = 4_096      # counts of short texts (placeholders, markers) by value
TOTALS = 256             # stored-token totals per request length
SHARED_CHANGES = 65_536  # one Change object per spec shared by every row that has it
TEXTS = 1_024            # detail lines and tier heads formatted once
SHORT_TEXT = 256         # texts up to this long have their counts memoised by value

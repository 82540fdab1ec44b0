"""What a session file may ask for before it is refused with one line.

A real session has a handful of conversations (agents, side chains,
sub-agents) and tool arguments a few levels deep (parsing.argument_depth);
a file past these would take gigabytes (100,000 side chains: 2.2 GB for
`report --json`). Read as `limits.MAX_CONVERSATIONS` at the check, so that
a test can lower it.
"""

MAX_CONVERSATIONS = 2_000

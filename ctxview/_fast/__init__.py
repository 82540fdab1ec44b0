"""The speed machinery behind the rules.

Each function here has the name and the results of a rule in ctxview.engine and is
faster on the work the pipeline repeats: memo tables kept between runs (the compressor's
in a `Memo` that each PipelineCache owns), inlined loops, stores in bulk. The rules never import this package (the import contract says so); the
pipeline and the analysis call it. tests/test_fast_equals_plain.py holds each pair equal.
"""

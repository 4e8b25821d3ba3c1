"""The stages, as pure functions on arrays: tokenizer -> vectorize -> fingerprint -> blocking
or tables (candidates) -> verifier -> cluster; the scheme planner's maths (schemes) and the
page's experiments (calibrate).

Nothing here reads a file, prints, or knows about the command line; it imports nothing of the
package above it (only :mod:`simhash_cli.errors`).
"""

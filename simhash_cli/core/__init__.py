"""The stages, as pure functions on arrays, a subpackage each in the order a document goes
through them: :mod:`.text` (text -> tokens -> weighted vectors), :mod:`.sketch` (vectors ->
SimHash fingerprints and MinHash signatures), :mod:`.search` (sketches -> candidate pairs,
and the planner that chooses how), :mod:`.verify` (candidates -> the pairs that reach the
threshold), :mod:`.clusters` (pairs -> clusters). :mod:`.pipeline` chains them
(:func:`~simhash_cli.core.pipeline.dedupe`); :mod:`.config`, :mod:`.corpus`, :mod:`.result`
and :mod:`.events` are the types they share.

Nothing here reads a file, prints, or knows about the command line; it imports nothing of the
package above it (only :mod:`simhash_cli.errors`).
"""

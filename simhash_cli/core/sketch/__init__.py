"""Stage 2, vectors -> sketches: ``fingerprint`` (SimHash, bit-identical to the reference
implementation: FNV-1a over the UTF-16 code units of ``feature + ':' + seed``, xorshift32
signs, slot i is bit i) and ``minhash`` (MinHash signatures of the token sets, and their
bands)."""

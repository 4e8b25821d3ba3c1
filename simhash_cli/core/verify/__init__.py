"""Stage 4, candidate pairs -> verified pairs: ``cosines`` (Hamming distance, estimated and
true cosine), ``verifier`` (candidates in, the pairs that reach the threshold out, chunk by
chunk), ``audit`` (a scheme measured against every pair), ``ambiguity`` (whether unrelated
documents come near the threshold)."""

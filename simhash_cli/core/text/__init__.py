"""Stage 1, text -> vectors: a document's text becomes tokens (``tokenizer``: words, word
shingles or character n-grams; ``scripts``: the scripts written without spaces; ``words``:
the default words of a batch found and keyed in bulk; ``wordtable``: each word's 64-bit key)
and its tokens a weighted vector (``vectorize``: counts -> CSR weights, tf, binary, log or
tfidf; ``keyed``: vectors over feature keys, compared without a shared vocabulary)."""

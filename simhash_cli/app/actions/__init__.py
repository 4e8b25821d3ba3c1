"""Acting on clusters: a plan of what to keep and remove (:mod:`.plans`, ``dedupe --plan``),
its steps taken with every check again (:mod:`.apply`, with a journal), or written as a shell
script for review (:mod:`.script`)."""
